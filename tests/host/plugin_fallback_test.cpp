// `kernels: auto` falls back down the scores when the best plugin fails to
// create (with a warning naming it and its error); a plugin built for a newer
// ABI minor runs, with a warning.
#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

// A named namespace: the unity build puts this file in one unit with
// plugin_host_test.cpp, whose helpers have the same names.
namespace glmrt::plugin_fallback_test {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const fs::path kPlugins = GLMRT_TEST_PLUGIN_DIR;

PluginChoice chosen_at_line_3(std::string name) {
  return PluginChoice{std::move(name), {}, "profile.yaml:3"};
}

class PluginFallback : public ::testing::Test {
 protected:
  MemoryBudget budget_;
  HostServices services_{budget_, 1};
};

TEST_F(PluginFallback, AutoFallsBackToTheNextBestWhenCreateFails) {
  const PluginHost host(std::vector<fs::path>{kPlugins / "auto-fallback"});
  testing::internal::CaptureStderr();
  const auto kernels = host.create_kernels(chosen_at_line_3("auto"), services_);
  const std::string warnings = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(kernels);
  EXPECT_EQ(kernels.info().name, "test-runner-up");
  EXPECT_THAT(warnings, AllOf(HasSubstr("glmrt: warning: kernels `auto`"),
                              HasSubstr("`test-create-fails` (score 900) failed"),
                              HasSubstr("falling back to `test-runner-up` (score 100)"),
                              HasSubstr("the imaginary XQZ device is busy")));
}

TEST_F(PluginFallback, AutoWithEveryCandidateFailingNamesEachError) {
  const PluginHost host(std::vector<fs::path>{kPlugins / "auto-all-fail"});
  testing::internal::CaptureStderr();
  try {
    host.create_kernels(chosen_at_line_3("auto"), services_);
    ADD_FAILURE() << "a plugin was created";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("profile.yaml:3: key `plugins.kernels`"),
                                HasSubstr("no kernels plugin could be created"),
                                HasSubstr("test-create-fails: the imaginary XQZ device is busy"),
                                HasSubstr("test-also-fails: the imaginary XQZ device is busy")));
  }
  testing::internal::GetCapturedStderr();
}

TEST_F(PluginFallback, ANamedPluginThatFailsDoesNotFallBack) {
  const PluginHost host(std::vector<fs::path>{kPlugins / "auto-fallback"});
  EXPECT_THROW(host.create_kernels(chosen_at_line_3("test-create-fails"), services_), Error);
}

TEST_F(PluginFallback, ANewerAbiMinorRunsWithAWarning) {
  const PluginHost host(std::vector<fs::path>{kPlugins});
  testing::internal::CaptureStderr();
  const auto kernels = host.create_kernels(chosen_at_line_3("test-other-minor"), services_);
  const std::string warnings = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(kernels);
  EXPECT_THAT(warnings,
              AllOf(HasSubstr("libglmrt-test-other-minor.so: plugin `test-other-minor`"),
                    HasSubstr(fmt::format("built for ABI {}.{}, newer than this glmrt's {}.{}",
                                          GLMRT_ABI_MAJOR, GLMRT_ABI_MINOR + 1, GLMRT_ABI_MAJOR,
                                          GLMRT_ABI_MINOR))));
  testing::internal::CaptureStderr();
  host.create_kernels(chosen_at_line_3("test-best"), services_);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace glmrt::plugin_fallback_test
