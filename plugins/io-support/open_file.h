// An open file of an io plugin's file set: its path (for messages) and
// descriptor, closed on destruction.
#pragma once

#include <string>

namespace glmrt::io_support {

class OpenFile {
 public:
  OpenFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  OpenFile(OpenFile&& other) noexcept;
  OpenFile& operator=(OpenFile&&) = delete;
  OpenFile(const OpenFile&) = delete;
  ~OpenFile();
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace glmrt::io_support
