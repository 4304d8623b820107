// A fresh folder per test (named after the process, so parallel ctest
// processes never share one), removed at the end.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace glmrt::history_test {

class HistoryTempDir {
 public:
  HistoryTempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() /
                           ("glmrt-history-" + std::to_string(::getpid()) + "-XXXXXX"))
                              .string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  HistoryTempDir(const HistoryTempDir&) = delete;
  HistoryTempDir& operator=(const HistoryTempDir&) = delete;
  ~HistoryTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace glmrt::history_test
