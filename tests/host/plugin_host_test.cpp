// PluginHost: search order, the checks that refuse a plugin (each message
// must name the file and the mismatch), `auto`, and handle lifetime.
#include "scoped_env.h"

#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const fs::path kTestPlugins = GLMRT_TEST_PLUGIN_DIR;
const fs::path kRealPlugins = fs::path(GLMRT_BUILD_DIR) / "plugins";

fs::path test_plugin(const std::string& name) {
  return kTestPlugins / ("libglmrt-" + name + ".so");
}

PluginChoice choose(std::string name, std::map<std::string, std::string> settings = {}) {
  return PluginChoice{std::move(name), std::move(settings), {}};
}

/// The message of the glmrt::Error `body` throws (fails the test if none).
template <typename Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a glmrt::Error";
  return {};
}

using test::ScopedEnv;

class PluginHostTest : public ::testing::Test {
 protected:
  PluginHost host_{std::vector<fs::path>{kTestPlugins, kRealPlugins}};
};

TEST_F(PluginHostTest, MissingNameListsEveryFolderSearched) {
  const std::string message =
      error_of([&] { host_.resolve(choose("kernels-nonexistent"), GLMRT_PLUGIN_KERNELS); });
  EXPECT_THAT(message, AllOf(HasSubstr("libglmrt-kernels-nonexistent.so"),
                             HasSubstr(kTestPlugins.string()), HasSubstr(kRealPlugins.string())));
}

TEST_F(PluginHostTest, FileWithoutEntrySymbolIsNotAPlugin) {
  const std::string message =
      error_of([&] { host_.resolve(choose("test-no-entry"), GLMRT_PLUGIN_KERNELS); });
  EXPECT_THAT(message, AllOf(HasSubstr(test_plugin("test-no-entry").string()),
                             HasSubstr("not a glmrt plugin"), HasSubstr("glmrt_plugin_describe")));
}

TEST_F(PluginHostTest, OtherAbiMajorIsRefused) {
  const std::string message =
      error_of([&] { host_.resolve(choose("test-abi-major"), GLMRT_PLUGIN_KERNELS); });
  EXPECT_THAT(message,
              AllOf(HasSubstr(test_plugin("test-abi-major").string()), HasSubstr("expected 1.x"),
                    HasSubstr("found 2." + std::to_string(GLMRT_ABI_MINOR))));
}

TEST_F(PluginHostTest, InspectRefusesOtherAbiMajorToo) {
  const std::string message = error_of([&] { host_.inspect(test_plugin("test-abi-major")); });
  EXPECT_THAT(message, HasSubstr("found 2." + std::to_string(GLMRT_ABI_MINOR)));
}

TEST_F(PluginHostTest, TooSmallDescriptorIsRefused) {
  const std::string message =
      error_of([&] { host_.resolve(choose("test-small-descriptor"), GLMRT_PLUGIN_KERNELS); });
  EXPECT_THAT(message, AllOf(HasSubstr(test_plugin("test-small-descriptor").string()),
                             HasSubstr("descriptor is 16 bytes"),
                             HasSubstr(std::to_string(sizeof(glmrt_plugin_descriptor)))));
}

TEST_F(PluginHostTest, WrongKindNamesExpectedAndFound) {
  const std::string message =
      error_of([&] { host_.resolve(choose("test-wrong-kind"), GLMRT_PLUGIN_KERNELS); });
  EXPECT_THAT(message, AllOf(HasSubstr(test_plugin("test-wrong-kind").string()),
                             HasSubstr("expected kernels, found io")));
}

TEST_F(PluginHostTest, DraftPluginOlderThanTheDraftContractIsRefused) {
  // Its Draft interface is the 1.0 declaration no host ran: calling it through
  // the 1.2 table would be undefined.
  const std::string message =
      error_of([&] { host_.resolve(choose("test-old-draft"), GLMRT_PLUGIN_DRAFT); });
  EXPECT_THAT(message,
              AllOf(HasSubstr(test_plugin("test-old-draft").string()),
                    HasSubstr(fmt::format("built for ABI 1.{}", GLMRT_ABI_MINOR_DRAFT - 1)),
                    HasSubstr("draft plugins need ABI 1.2")));
}

TEST_F(PluginHostTest, UnsupportedOnThisCpuGivesProbeReason) {
  const std::string message =
      error_of([&] { host_.resolve(choose("test-unsupported"), GLMRT_PLUGIN_KERNELS); });
  EXPECT_THAT(message, AllOf(HasSubstr(test_plugin("test-unsupported").string()),
                             HasSubstr("not supported on this CPU"),
                             HasSubstr("needs the imaginary XQZ-512 instructions")));
}

TEST_F(PluginHostTest, OtherMinorOfSameMajorIsAcceptedAndWorks) {
  MemoryBudget budget;
  HostServices services(budget, 1);
  auto kernels = host_.create_kernels(choose("test-other-minor"), services);
  ASSERT_TRUE(kernels);
  EXPECT_EQ(kernels.info().abi, fmt::format("{}.{}", GLMRT_ABI_MAJOR, GLMRT_ABI_MINOR + 1));
  const float w[] = {1, 2, 3, 4, 5, 6};  // W[2, 3]
  const float x[] = {1, 0, -1};
  float y[2] = {};
  glmrt_weight_view view{{sizeof(glmrt_weight_format), GLMRT_F32, 0, 0, 4}, w, nullptr, 2, 3, 12};
  ASSERT_EQ(kernels->matmul(x, 1, view, y), GLMRT_OK) << kernels->last_error();
  EXPECT_FLOAT_EQ(y[0], -2);
  EXPECT_FLOAT_EQ(y[1], -2);
}

TEST_F(PluginHostTest, RefusedSettingsNameTheFileAndTheKey) {
  MemoryBudget budget;
  HostServices services(budget, 1);
  const std::string message = error_of([&] {
    host_.create_kernels(choose("test-best", {{"turbo", "on"}}), services);
  });
  EXPECT_THAT(message, AllOf(HasSubstr(test_plugin("test-best").string()), HasSubstr("`turbo`")));
}

TEST_F(PluginHostTest, AutoPicksHighestScoreAmongSupportedKernels) {
  // test-unsupported scores 1000 but cannot run; test-best (50) beats kernels-scalar (1).
  EXPECT_EQ(host_.resolve(choose("auto"), GLMRT_PLUGIN_KERNELS), test_plugin("test-best"));
  // Among the in-tree plugins: the best score this CPU supports (kernels-scalar
  // at least, which runs everywhere).
  PluginHost real_only(std::vector<fs::path>{kRealPlugins});
  const std::vector<PluginInfo> found = real_only.discover();
  const PluginInfo* best = nullptr;
  for (const auto& info : found)
    if (info.kind == "kernels" && info.supported && (!best || info.score > best->score))
      best = &info;
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(real_only.resolve(choose("auto"), GLMRT_PLUGIN_KERNELS), best->path);
}

TEST_F(PluginHostTest, AutoIsOnlyForKernels) {
  EXPECT_THAT(error_of([&] { host_.resolve(choose("auto"), GLMRT_PLUGIN_IO); }),
              HasSubstr("kernels plugins only"));
}

TEST_F(PluginHostTest, AutoWithNothingSupportedSaysWhy) {
  PluginHost only_broken(std::vector<fs::path>{kTestPlugins / "no-such-folder"});
  EXPECT_THAT(error_of([&] { only_broken.resolve(choose("auto"), GLMRT_PLUGIN_KERNELS); }),
              AllOf(HasSubstr("no kernels plugin"), HasSubstr("no-such-folder")));
}

TEST_F(PluginHostTest, PathChoiceLoadsThatFile) {
  const fs::path file = kRealPlugins / "libglmrt-kernels-scalar.so";
  EXPECT_EQ(host_.resolve(choose(file.string()), GLMRT_PLUGIN_KERNELS), file);
  const std::string message =
      error_of([&] { host_.resolve(choose("/nowhere/libglmrt-gone.so"), GLMRT_PLUGIN_KERNELS); });
  EXPECT_THAT(message, AllOf(HasSubstr("/nowhere/libglmrt-gone.so"), HasSubstr("not found")));
}

TEST_F(PluginHostTest, ProfilePathsComeBeforeEnvironmentPath) {
  ScopedEnv env("GLMRT_PLUGIN_PATH",
                (kTestPlugins / "first").string() + ":" + kRealPlugins.string());
  Profile profile;
  profile.plugin_paths = {kTestPlugins / "second"};
  PluginHost host(profile);
  ASSERT_GE(host.search_dirs().size(), 3u);
  EXPECT_EQ(host.search_dirs()[0], kTestPlugins / "second");
  EXPECT_EQ(host.search_dirs()[1], kTestPlugins / "first");
  EXPECT_EQ(host.search_dirs()[2], kRealPlugins);
  EXPECT_EQ(host.resolve(choose("test-dup"), GLMRT_PLUGIN_KERNELS),
            kTestPlugins / "second" / "libglmrt-test-dup.so");

  PluginHost env_only{Profile{}};
  EXPECT_EQ(env_only.resolve(choose("test-dup"), GLMRT_PLUGIN_KERNELS),
            kTestPlugins / "first" / "libglmrt-test-dup.so");
}

TEST_F(PluginHostTest, DiscoverListsBrokenPluginsAndFirstFoundWins) {
  PluginHost host(std::vector<fs::path>{kTestPlugins / "second", kTestPlugins / "first",
                                        kTestPlugins, kRealPlugins});
  const std::vector<PluginInfo> all = host.discover();
  auto find = [&](const std::string& name) -> const PluginInfo* {
    for (const PluginInfo& p : all)
      if (p.name == name) return &p;
    return nullptr;
  };
  int dups = 0;
  for (const PluginInfo& p : all) dups += p.name == "test-dup";
  EXPECT_EQ(dups, 1);
  ASSERT_NE(find("test-dup"), nullptr);
  EXPECT_EQ(find("test-dup")->version, "second");

  ASSERT_NE(find("kernels-scalar"), nullptr);
  EXPECT_TRUE(find("kernels-scalar")->supported);
  EXPECT_EQ(find("kernels-scalar")->kind, "kernels");
  ASSERT_NE(find("io-buffered"), nullptr);
  EXPECT_TRUE(find("io-buffered")->supported);
  EXPECT_EQ(find("io-buffered")->kind, "io");

  ASSERT_NE(find("test-no-entry"), nullptr);
  EXPECT_FALSE(find("test-no-entry")->supported);
  EXPECT_THAT(find("test-no-entry")->reason, HasSubstr("not a glmrt plugin"));
  ASSERT_NE(find("test-unsupported"), nullptr);
  EXPECT_FALSE(find("test-unsupported")->supported);
  EXPECT_THAT(find("test-unsupported")->reason, HasSubstr("XQZ-512"));
}

TEST_F(PluginHostTest, HandleKeepsPluginUsableAfterHostIsGone) {
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> kernels;
  {
    PluginHost temporary(std::vector<fs::path>{kRealPlugins});
    kernels = temporary.create_kernels(choose("kernels-scalar"), services);
  }
  ASSERT_TRUE(kernels);
  PluginHandle<plugin::Kernels> moved = std::move(kernels);
  EXPECT_FALSE(kernels);
  const float w[] = {2, 3};
  const float x[] = {4, 5};
  float y = 0;
  glmrt_weight_view view{{sizeof(glmrt_weight_format), GLMRT_F32, 0, 0, 4}, w, nullptr, 1, 2, 8};
  ASSERT_EQ(moved->matmul(x, 1, view, &y), GLMRT_OK) << moved->last_error();
  EXPECT_FLOAT_EQ(y, 23);
  EXPECT_EQ(moved.info().name, "kernels-scalar");
}

TEST_F(PluginHostTest, CheckProfilePrefixesTheProfileKeyOrigin) {
  Profile profile;
  profile.plugin_paths = {kRealPlugins};
  profile.kernels = PluginChoice{"kernels-nonexistent", {}, "my.yaml:3"};
  EXPECT_THAT(error_of([&] { PluginHost(profile).check_profile(profile); }),
              AllOf(StartsWith("my.yaml:3: key `plugins.kernels`: "),
                    HasSubstr("libglmrt-kernels-nonexistent.so")));

  profile.kernels = PluginChoice{"kernels-scalar", {}, "my.yaml:3"};
  profile.io = PluginChoice{"io-buffered", {{"bogus", "1"}}, "my.yaml:4"};
  EXPECT_THAT(error_of([&] { PluginHost(profile).check_profile(profile); }),
              AllOf(StartsWith("my.yaml:4: key `plugins.io`: "), HasSubstr("`bogus`")));

  profile.io = PluginChoice{"io-buffered", {{"threads", "4"}}, "my.yaml:4"};
  EXPECT_NO_THROW(PluginHost(profile).check_profile(profile));
}

}  // namespace
}  // namespace glmrt
