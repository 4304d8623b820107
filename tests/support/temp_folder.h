// A fresh folder for a test's files, removed with everything in it when the
// object goes: its name carries the process id and a random part, so the
// processes ctest runs in parallel never share one, and nothing is left in
// the temporary directory after a run.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace glmrt::test {

class TempFolder {
 public:
  explicit TempFolder(const std::string& prefix = "glmrt-test") {
    std::string pattern = (std::filesystem::temp_directory_path() /
                           (prefix + "-" + std::to_string(::getpid()) + "-XXXXXX"))
                              .string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot make a temporary folder like " + pattern);
    path_ = pattern;
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// A folder for this process's files, removed when the process ends.
inline const std::filesystem::path& process_temp_folder() {
  static const TempFolder folder("glmrt-test");
  return folder.path();
}

}  // namespace glmrt::test
