// The ceiling on `serve --http-threads` read from a pids cgroup (issue 34:
// 100000 threads in a pids cgroup never listened): fake cgroup files.
#include <glmrt/serve/thread_ceiling.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace glmrt::serve {
namespace {

namespace fs = std::filesystem;

class ThreadCeilingFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("glmrt-pids-" + std::to_string(::getpid()));
    fs::create_directories(root_);
    files_.self_cgroup = root_ / "cgroup";
    files_.cgroup_mount = root_ / "mount";
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }

  fs::path root_;
  ProcessLimitFiles files_;
};

TEST_F(ThreadCeilingFiles, HalfOfWhatAV2PidsLimitLeaves) {
  write(files_.self_cgroup, "0::/box/inner\n");
  write(files_.cgroup_mount / "box/pids.max", "300\n");
  write(files_.cgroup_mount / "box/pids.current", "100\n");
  write(files_.cgroup_mount / "box/inner/pids.max", "max\n");
  const ThreadCeiling ceiling = http_thread_ceiling(files_);
  EXPECT_LE(ceiling.threads, 100u);
  if (ceiling.threads == 100u) {
    EXPECT_NE(ceiling.reason.find("pids.max"), std::string::npos);
  }
}

TEST_F(ThreadCeilingFiles, AV1PidsLimit) {
  write(files_.self_cgroup, "8:pids:/job\n4:memory:/job\n");
  write(files_.cgroup_mount / "pids/job/pids.max", "64\n");
  write(files_.cgroup_mount / "pids/job/pids.current", "4\n");
  EXPECT_LE(http_thread_ceiling(files_).threads, 30u);
}

TEST_F(ThreadCeilingFiles, NoLimitLeavesGlmrtsOwn) {
  write(files_.self_cgroup, "0::/\n");
  EXPECT_LE(http_thread_ceiling(files_).threads, kMaxHttpThreads);
  EXPECT_GT(http_thread_ceiling(files_).threads, 0u);
}

}  // namespace
}  // namespace glmrt::serve
