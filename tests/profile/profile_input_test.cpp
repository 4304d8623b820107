// What the profile loader says about input that is not quite wrong (a plugin
// folder that does not exist: a warning naming FILE:LINE and the key) and
// input no parser should choke on (a folder, YAML nested thousands deep).
#include <glmrt/base/error.h>
#include <glmrt/profile/profile.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class ProfileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("glmrt-profile-input-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "plugins");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& text) {
    const fs::path file = dir_ / "p.yaml";
    std::ofstream(file) << text;
    return file;
  }
  std::string error_of(const fs::path& file) {
    try {
      load_profile(file);
    } catch (const Error& e) {
      return e.what();
    }
    return "loaded";
  }
  /// Loads `text`, returning what was printed on stderr.
  std::string warnings_of(const std::string& text) {
    const fs::path file = write(text);
    testing::internal::CaptureStderr();
    load_profile(file);
    return testing::internal::GetCapturedStderr();
  }

  fs::path dir_;
};

TEST_F(ProfileInput, AMissingPluginFolderIsAWarningNamingTheLineAndKey) {
  const std::string warnings = warnings_of(
      "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
      "plugin_paths:\n  - plugins\n  - no-such-folder\n");
  EXPECT_THAT(warnings,
              AllOf(HasSubstr("glmrt: warning: "), HasSubstr("p.yaml:4: "),
                    HasSubstr("key `plugin_paths[1]`"),
                    HasSubstr((dir_ / "no-such-folder").string()), HasSubstr("does not exist")));
  EXPECT_THAT(warnings, Not(HasSubstr("plugin_paths[0]")));
}

TEST_F(ProfileInput, ExistingPluginFoldersGiveNoWarning) {
  EXPECT_EQ(warnings_of("plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                        "plugin_paths: [plugins]\n"),
            "");
}

TEST_F(ProfileInput, AFolderGivenAsTheProfileIsReportedAsOne) {
  EXPECT_THAT(error_of(dir_), AllOf(HasSubstr(dir_.string()), HasSubstr("is a directory")));
}

TEST_F(ProfileInput, YamlNestedThousandsDeepIsAClearError) {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  EXPECT_THAT(error_of(write("plugins: " + deep + "\n")),
              AllOf(HasSubstr("p.yaml:1: invalid YAML"), HasSubstr("nest too deeply")));
}

}  // namespace
}  // namespace glmrt
