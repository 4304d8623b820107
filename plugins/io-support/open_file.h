// An open file of an io plugin's file set: its path (for messages) and
// descriptor, closed on destruction.
#pragma once

#include <glmrt/plugin/abi.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

/// Opens every path read-only, into `files` only when all of them open; else
/// GLMRT_ERR_IO with `error` = "PLUGIN: cannot open PATH: why".
glmrt_status open_read_only(std::string_view plugin, const char* const* paths, int32_t n_paths,
                            std::vector<OpenFile>& files, std::string& error);

}  // namespace glmrt::io_support
