// The out-of-tree plugin story end to end: `cmake --install --component sdk`
// to a prefix, find_package(glmrt) from a separate project
// (examples/third-party-kernels-avx512), and the host loading the result by
// path. On a CPU without AVX-512 the plugin must load and say why it cannot
// run; where it can, it must pass the kernels conformance cases. Its emulated
// build must pass them everywhere.
#include <glmrt/base/error.h>
#include <glmrt/conformance/kernels_conformance.h>
#include <glmrt/host/plugin_host.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

std::string quoted(const fs::path& p) {
  return fmt::format("'{}'", p.string());
}

/// Runs a shell command, its output into `log`; true on exit status 0.
bool run(const std::string& command, const fs::path& log) {
  return std::system(fmt::format("{} >{} 2>&1", command, quoted(log)).c_str()) == 0;
}

class ThirdPartyPlugin : public testing::Test {
 protected:
  /// Installs the SDK and builds the example (native and emulated) under the
  /// build tree. ctest runs each test in its own process, possibly two at a
  /// time: the first builds under a lock, the others find it up to date.
  static void SetUpTestSuite() {
    root_ = fs::path(GLMRT_BUILD_DIR) / "third-party-example";
    fs::create_directories(root_);
    const int lock = ::open((root_ / ".lock").c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(lock, 0) << "cannot open " << root_ / ".lock";
    ::flock(lock, LOCK_EX);
    const fs::path prefix = root_ / "prefix";
    const std::string cmake = quoted(GLMRT_CMAKE_COMMAND);
    install_ok_ = run(fmt::format("{} --install {} --component sdk --prefix {}", cmake,
                                  quoted(GLMRT_BUILD_DIR), quoted(prefix)),
                      root_ / "install.log");
    if (install_ok_) {
      build_ok_ = build_example("build", "");
      emulated_build_ok_ = build_example("build-emulated", "-DKERNELS_AVX512_EMULATED=ON");
    }
    ::flock(lock, LOCK_UN);
    ::close(lock);
  }
  /// Configures and builds the example in root_/`dir`, logging to `dir`.log.
  static bool build_example(const std::string& dir, const std::string& options) {
    const fs::path example = fs::path(GLMRT_SOURCE_DIR) / "examples/third-party-kernels-avx512";
    const fs::path build = root_ / dir;
    const std::string cmake = quoted(GLMRT_CMAKE_COMMAND);
    return run(fmt::format(
                   "{} -S {} -B {} -G '{}' -DCMAKE_CXX_COMPILER={} -DCMAKE_PREFIX_PATH={} {}",
                   cmake, quoted(example), quoted(build), GLMRT_CMAKE_GENERATOR,
                   quoted(GLMRT_CXX_COMPILER), quoted(root_ / "prefix"), options),
               root_ / (dir + "-configure.log")) &&
           run(fmt::format("{} --build {}", cmake, quoted(build)), root_ / (dir + ".log"));
  }
  static fs::path plugin() { return root_ / "build" / "libglmrt-kernels-avx512.so"; }
  static fs::path emulated_plugin() {
    return root_ / "build-emulated" / "libglmrt-kernels-avx512-emulated.so";
  }
  /// The end of a step's output, for the failure message.
  static std::string log(const char* name) {
    std::ifstream in(root_ / name);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return fmt::format("{}:\n{}", name, text.substr(text.size() > 3000 ? text.size() - 3000 : 0));
  }
  static bool cpu_has_avx512() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  }

  static inline fs::path root_;
  static inline bool install_ok_ = false;
  static inline bool build_ok_ = false;
  static inline bool emulated_build_ok_ = false;
};

TEST_F(ThirdPartyPlugin, InstalledSdkHasHeadersAndPackage) {
  ASSERT_TRUE(install_ok_) << log("install.log");
  const fs::path prefix = root_ / "prefix";
  EXPECT_TRUE(fs::exists(prefix / "include/glmrt/plugin/kernels.h"));
  bool found_config = false;
  for (const auto& entry : fs::recursive_directory_iterator(prefix))
    found_config = found_config || entry.path().filename() == "glmrtConfigVersion.cmake";
  EXPECT_TRUE(found_config) << "no glmrtConfigVersion.cmake under " << prefix;
}

TEST_F(ThirdPartyPlugin, BuildsOutOfTreeAgainstTheInstalledSdk) {
  ASSERT_TRUE(install_ok_) << log("install.log");
  ASSERT_TRUE(build_ok_) << log("build-configure.log") << "; " << log("build.log");
  EXPECT_TRUE(fs::exists(plugin()));
}

TEST_F(ThirdPartyPlugin, HostLoadsItAndItsProbeAnswers) {
  ASSERT_TRUE(build_ok_) << log("build.log");
  const PluginInfo info = PluginHost(std::vector<fs::path>{}).inspect(plugin());
  EXPECT_EQ(info.kind, "kernels");
  EXPECT_EQ(info.name, "kernels-avx512");
  // Built against the installed SDK: its ABI is this glmrt's.
  EXPECT_EQ(info.abi, std::to_string(GLMRT_ABI_MAJOR) + "." + std::to_string(GLMRT_ABI_MINOR));
  EXPECT_EQ(info.abi_minor, GLMRT_ABI_MINOR);
  if (cpu_has_avx512()) {
    EXPECT_TRUE(info.supported) << info.reason;
    EXPECT_EQ(info.score, 30);
  } else {
    EXPECT_FALSE(info.supported);
    EXPECT_NE(info.reason.find("AVX-512"), std::string::npos) << info.reason;
    // A profile naming it by path gets the reason, not a crash.
    MemoryBudget budget;
    HostServices services(budget, 1);
    try {
      PluginHost(std::vector<fs::path>{})
          .create_kernels(PluginChoice{plugin().string(), {}, {}}, services);
      ADD_FAILURE() << "create_kernels succeeded on a CPU without AVX-512";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("AVX-512"), std::string::npos) << e.what();
    }
  }
}

TEST_F(ThirdPartyPlugin, PassesKernelsConformance) {
  ASSERT_TRUE(build_ok_) << log("build.log");
  if (!cpu_has_avx512())
    GTEST_SKIP() << "this CPU lacks AVX-512 (avx512f/bw/vl): the plugin cannot run here";
  const conformance::CheckReport report =
      conformance::run_kernels_conformance(plugin(), conformance::KernelsConformanceOptions{{2}});
  for (const conformance::CheckResult& r : report.results())
    EXPECT_NE(r.outcome, conformance::Outcome::kFail) << r.name << ": " << r.detail;
}

}  // namespace
}  // namespace glmrt

namespace glmrt {
namespace {

// The same kernel source built without AVX-512 flags (SIMDe runs the
// intrinsics portably) checks the plugin's arithmetic on any CPU, the VNNI
// int8/int4 paths included.
TEST_F(ThirdPartyPlugin, EmulatedBuildPassesKernelsConformance) {
  ASSERT_TRUE(emulated_build_ok_) << log("build-emulated-configure.log") << "; "
                                  << log("build-emulated.log");
  const PluginInfo info = PluginHost(std::vector<fs::path>{}).inspect(emulated_plugin());
  EXPECT_EQ(info.name, "kernels-avx512-emulated");
  ASSERT_TRUE(info.supported) << info.reason;
  EXPECT_EQ(info.score, 0) << "`kernels: auto` must never prefer the emulated build";
  const conformance::CheckReport report = conformance::run_kernels_conformance(
      emulated_plugin(), conformance::KernelsConformanceOptions{{2}});
  int passed = 0;
  for (const conformance::CheckResult& r : report.results()) {
    EXPECT_NE(r.outcome, conformance::Outcome::kFail) << r.name << ": " << r.detail;
    passed += r.outcome == conformance::Outcome::kPass;
  }
  EXPECT_GT(passed, 1000);
}

}  // namespace
}  // namespace glmrt
