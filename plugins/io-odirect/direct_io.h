// io-odirect: expert reads that bypass the page cache. Each file is opened
// twice, O_DIRECT and buffered (the seed program's twin descriptors); reads
// go O_DIRECT straight into the host's aligned buffers (expert slots), one
// pread per extent, several extents in flight on threads borrowed from the
// host. A file whose filesystem refuses O_DIRECT (tmpfs) is read buffered,
// with one warning through the host's log.
#pragma once

#include "direct_read.h"
#include "odirect_settings.h"
#include "read_queue.h"

#include <glmrt/plugin/io.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace glmrt::io_odirect {

/// What O_DIRECT needs of offsets, lengths and buffers: the logical block
/// size of every drive in use today is at most 4 KiB.
inline constexpr uint32_t kDirectAlignment = 4096;

/// A file of the set: both descriptors, closed on destruction; whether it is
/// still read O_DIRECT (a refusal at read time switches it off for good).
class TwinFile {
 public:
  explicit TwinFile(FileTwins twins) : twins_(std::move(twins)) {}
  TwinFile(TwinFile&& other) noexcept;
  TwinFile& operator=(TwinFile&&) = delete;
  TwinFile(const TwinFile&) = delete;
  ~TwinFile();
  const FileTwins& twins() const { return twins_; }
  bool direct() const { return twins_.direct_fd >= 0 && !direct_off_.load(); }
  void turn_direct_off() { direct_off_ = true; }

 private:
  FileTwins twins_;
  std::atomic<bool> direct_off_{false};
};

class DirectIo final : public plugin::Io, public io_support::ExtentReader {
 public:
  /// Starts the reader threads; throws std::runtime_error when the host refuses.
  DirectIo(const glmrt_host_services& host, DirectSettings settings);

  glmrt_status open_files(const char* const* paths, int32_t n_paths) noexcept override;
  glmrt_status read(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  /// posix_fadvise(WILLNEED) for files read buffered; nothing for O_DIRECT
  /// files (the page cache is not used; the host reads ahead with submit).
  void prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  uint32_t alignment() const noexcept override { return kDirectAlignment; }
  const char* last_error() const noexcept override { return error_.c_str(); }
  // The object was made with `new` in create(); this is its one owner.
  void destroy() noexcept override { delete this; }
  glmrt_status submit(const glmrt_extent* extents, int64_t n_extents, glmrt_extent_result* results,
                      glmrt_io_ticket* ticket) noexcept override;
  glmrt_status wait(glmrt_io_ticket ticket) noexcept override;
  glmrt_status poll(glmrt_io_ticket ticket, int32_t* complete) noexcept override;

 private:
  std::string check_extent(const glmrt_extent& extent, int64_t index) const;
  std::string read_extent(const glmrt_extent& extent, uint64_t sequence,
                          glmrt_extent_result& result) noexcept override;
  /// The first time O_DIRECT is refused (at open or read), one warning.
  void warn_fallback(const std::string& file, const std::string& why, size_t more_files) noexcept;

  const glmrt_host_services& host_;
  std::vector<TwinFile> files_;
  bool opened_ = false;
  std::atomic<bool> warned_{false};
  std::string error_;
  std::unique_ptr<io_support::ReadQueue> queue_;  // last: its workers stop before the rest goes
};

}  // namespace glmrt::io_odirect
