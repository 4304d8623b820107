// Reads through the page cache with pread, several extents at once on threads
// borrowed from the host, so a fast NVMe drive sees a deep queue; prefetch is
// posix_fadvise(WILLNEED).
#pragma once

#include "io_settings.h"
#include "plain_file_io.h"
#include "read_queue.h"

#include <memory>
#include <string>

namespace glmrt::io_buffered {

using io_support::IoSettings;
using io_support::OpenFile;

class BufferedIo final : public io_support::PlainFileIo<BufferedIo> {
 public:
  static constexpr const char* kName = "io-buffered";
  /// Threads default to the host's count.
  static constexpr io_support::IoSettingsRules kSettingsRules{kName, {}, 1024, true};

  /// Starts the reader threads; throws std::runtime_error when the host refuses.
  BufferedIo(const glmrt_host_services& host, IoSettings settings);

  uint32_t alignment() const noexcept override { return 1; }

 private:
  friend class io_support::QueuedIo<BufferedIo>;
  io_support::ReadQueue& queue() { return *queue_; }
  /// pread until the extent is full or the file ends (bytes < length, OK).
  std::string read_extent(const glmrt_extent& extent, uint64_t sequence,
                          glmrt_extent_result& result) noexcept override;

  bool drop_after_read_;
  std::unique_ptr<io_support::ReadQueue> queue_;  // last: its workers stop before the rest goes
};

}  // namespace glmrt::io_buffered
