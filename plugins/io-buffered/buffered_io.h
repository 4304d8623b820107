// Reads through the page cache with pread, many extents at once, so a fast
// NVMe drive sees a deep queue; prefetch is posix_fadvise(WILLNEED).
#pragma once

#include "io_settings.h"

#include <glmrt/plugin/io.h>

#include <string>
#include <vector>

namespace glmrt::io_buffered {

/// An open file descriptor, closed on destruction.
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

class BufferedIo final : public plugin::Io {
 public:
  BufferedIo(const glmrt_host_services& host, IoSettings settings);

  glmrt_status open_files(const char* const* paths, int32_t n_paths) noexcept override;
  glmrt_status read(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  void prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  uint32_t alignment() const noexcept override { return 1; }
  const char* last_error() const noexcept override { return error_.c_str(); }
  // The object was made with `new` in create(); this is its one owner.
  void destroy() noexcept override { delete this; }

 private:
  /// Empty when the extent names an open file and a destination.
  std::string check_extent(const glmrt_extent& extent, int64_t index) const;
  /// Reads [offset, offset + length) of `file` into `destination` completely;
  /// returns the error text, empty on success.
  std::string read_range(const OpenFile& file, uint64_t offset, uint64_t length,
                         std::byte* destination) const noexcept;

  int threads_;
  bool drop_after_read_;
  std::vector<OpenFile> files_;
  bool opened_ = false;
  std::string error_;
};

}  // namespace glmrt::io_buffered
