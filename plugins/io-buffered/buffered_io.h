// Reads through the page cache with pread, several extents at once on threads
// borrowed from the host, so a fast NVMe drive sees a deep queue; prefetch is
// posix_fadvise(WILLNEED).
#pragma once

#include "io_settings.h"
#include "open_file.h"
#include "read_queue.h"

#include <glmrt/plugin/io.h>

#include <memory>
#include <string>
#include <vector>

namespace glmrt::io_buffered {

using io_support::OpenFile;

class BufferedIo final : public plugin::Io, public io_support::ExtentReader {
 public:
  /// Starts the reader threads; throws std::runtime_error when the host refuses.
  BufferedIo(const glmrt_host_services& host, IoSettings settings);

  glmrt_status open_files(const char* const* paths, int32_t n_paths) noexcept override;
  glmrt_status read(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  void prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  uint32_t alignment() const noexcept override { return 1; }
  const char* last_error() const noexcept override { return error_.c_str(); }
  // The object was made with `new` in create(); this is its one owner.
  void destroy() noexcept override { delete this; }
  glmrt_status submit(const glmrt_extent* extents, int64_t n_extents, glmrt_extent_result* results,
                      glmrt_io_ticket* ticket) noexcept override;
  glmrt_status wait(glmrt_io_ticket ticket) noexcept override;
  glmrt_status poll(glmrt_io_ticket ticket, int32_t* complete) noexcept override;

 private:
  /// Empty when the extent names an open file and a destination.
  std::string check_extent(const glmrt_extent& extent, int64_t index) const;
  /// pread until the extent is full or the file ends (bytes < length, OK).
  std::string read_extent(const glmrt_extent& extent, uint64_t sequence,
                          glmrt_extent_result& result) noexcept override;

  bool drop_after_read_;
  std::vector<OpenFile> files_;
  bool opened_ = false;
  std::string error_;
  std::unique_ptr<io_support::ReadQueue> queue_;  // last: its workers stop before the rest goes
};

}  // namespace glmrt::io_buffered
