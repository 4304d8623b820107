// Plugins built to hurt the host (tests/host/CMakeLists.txt: the hostile
// folders): each is refused with a message naming the file and what is wrong,
// before anything it gave is called or, when it crashes or hangs in its
// probe, by the child process that probed it; `auto` and discovery go on
// with the good plugin beside it.
#include "scoped_env.h"

#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kHostile = GLMRT_HOSTILE_PLUGIN_DIR;
// Short enough for a fast test, long enough for a loaded machine's fork and dlopen.
const std::string kShortTimeout = "1";

fs::path hostile_plugin(const std::string& defect) {
  return kHostile / defect / ("libglmrt-test-" + defect + ".so");
}

std::string inspect_error(const std::string& defect) {
  const PluginHost host(std::vector<fs::path>{kHostile / defect});
  try {
    host.inspect(hostile_plugin(defect));
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << defect << ": inspect() accepted it";
  return {};
}

TEST(HostilePlugins, AnEntryPointThatIsDataIsRefusedBeforeItIsCalled) {
  EXPECT_THAT(inspect_error("data-entry"),
              AllOf(HasSubstr(hostile_plugin("data-entry").string()),
                    HasSubstr("`glmrt_plugin_describe` is a data object, not a function")));
}

TEST(HostilePlugins, ADescriptorClaimingAGibibyteIsRefused) {
  EXPECT_THAT(inspect_error("huge-struct-size"),
              AllOf(HasSubstr(hostile_plugin("huge-struct-size").string()),
                    HasSubstr("field `struct_size` claims 1073741824 bytes")));
}

TEST(HostilePlugins, AProbeThatCrashesIsRefusedWithItsSignal) {
  const std::string message = inspect_error("crash-in-probe");
  EXPECT_THAT(message, HasSubstr(hostile_plugin("crash-in-probe").string() + ": refused: "));
#if !defined(__SANITIZE_ADDRESS__)  // ASan's handler may catch the fault and exit with 1
  EXPECT_THAT(message, HasSubstr("the plugin crashed while being probed (in a child process): "
                                 "SIGSEGV (Segmentation fault)"));
#endif
}

TEST(HostilePlugins, AProbeThatHangsIsRefusedAfterTheTimeout) {
  test::ScopedEnv timeout("GLMRT_PLUGIN_PROBE_TIMEOUT", "0.3");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(inspect_error("hang-in-probe"),
              AllOf(HasSubstr(hostile_plugin("hang-in-probe").string()),
                    HasSubstr("its probe did not finish within 0.3 s")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(HostilePlugins, ANameWithTerminalEscapesIsRefusedAndQuotedEscaped) {
  const std::string message = inspect_error("escape-name");
  EXPECT_THAT(message, AllOf(HasSubstr("field `name` holds control characters"),
                             HasSubstr("test-escape-name\\x1b[31m\\x1b]0;pwned\\x07")));
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
}

TEST(HostilePlugins, AutoAndDiscoveryPassOverEachOneAndListWhy) {
  test::ScopedEnv timeout("GLMRT_PLUGIN_PROBE_TIMEOUT", kShortTimeout);
  for (const std::string defect :
       {"data-entry", "huge-struct-size", "crash-in-probe", "hang-in-probe", "escape-name"}) {
    SCOPED_TRACE(defect);
    const PluginHost host(std::vector<fs::path>{kHostile / defect});
    EXPECT_EQ(host.resolve(PluginChoice{"auto", {}, {}}, GLMRT_PLUGIN_KERNELS),
              kHostile / defect / "libglmrt-test-good.so");
    bool listed = false;
    for (const PluginInfo& info : host.discover()) {
      if (info.path != hostile_plugin(defect)) continue;
      listed = true;
      EXPECT_FALSE(info.supported);
      EXPECT_THAT(info.reason, HasSubstr(hostile_plugin(defect).string()));
      EXPECT_EQ(info.reason.find('\x1b'), std::string::npos);
    }
    EXPECT_TRUE(listed);
  }
}

TEST(HostilePlugins, OnlyTheOwnPluginFoldersAreProbedInProcess) {
  const PluginHost host(std::vector<fs::path>{kHostile / "data-entry"});
  EXPECT_FALSE(host.vouches_for(hostile_plugin("data-entry")));
  EXPECT_FALSE(host.vouches_for(fs::path(GLMRT_TEST_PLUGIN_DIR) / "libglmrt-test-best.so"));
  // plugins/ beside the executable (this test's) is the build's own folder.
  const fs::path own = fs::read_symlink("/proc/self/exe").parent_path() / "plugins";
  EXPECT_TRUE(host.vouches_for(own / "libglmrt-kernels-scalar.so"));
  EXPECT_FALSE(host.vouches_for(own / "nested" / "libglmrt-kernels-scalar.so"));
}

TEST(HostilePlugins, AProbeTimeoutThatIsNotANumberOfSecondsIsRefused) {
  for (const std::string bad : {"soon", "0", "-1", "1e9", "2s"}) {
    test::ScopedEnv timeout("GLMRT_PLUGIN_PROBE_TIMEOUT", bad);
    try {
      const PluginHost host(std::vector<fs::path>{});
      ADD_FAILURE() << "accepted GLMRT_PLUGIN_PROBE_TIMEOUT=" << bad;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("$GLMRT_PLUGIN_PROBE_TIMEOUT"), HasSubstr(bad)));
    }
  }
}

}  // namespace
}  // namespace glmrt
