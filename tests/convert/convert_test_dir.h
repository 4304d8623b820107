// A scratch folder per test and process (parallel ctest processes never
// share one), removed afterwards.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>

namespace glmrt::test {

class ConvertScratch {
 public:
  explicit ConvertScratch(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              fmt::format("glmrt-convert-{}-{}", name, ::getpid())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ConvertScratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ConvertScratch(const ConvertScratch&) = delete;
  ConvertScratch& operator=(const ConvertScratch&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace glmrt::test
