// io-odirect: expert reads that bypass the page cache. Each file is opened
// twice, O_DIRECT and buffered (the seed program's twin descriptors); reads
// go O_DIRECT straight into the host's aligned buffers (expert slots), one
// pread per extent, several extents in flight on threads borrowed from the
// host. A file whose filesystem refuses O_DIRECT (tmpfs) is read buffered,
// with one warning through the host's log.
#pragma once

#include "direct_read.h"
#include "file_copies.h"
#include "io_settings.h"
#include "queued_io.h"
#include "read_queue.h"

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

class DirectIo final : public io_support::QueuedIo<DirectIo> {
 public:
  static constexpr const char* kName = "io-odirect";
  /// Four reads in flight by default, whatever the host's thread count.
  static constexpr io_support::IoSettingsRules kSettingsRules{
      kName,
      {.threads = 4, .drop_after_read = false, .max_bytes_per_second = 0, .mirrors = {}},
      64,
      false};

  /// Starts the reader threads; throws std::runtime_error when the host refuses.
  DirectIo(const glmrt_host_services& host, io_support::IoSettings settings);

  uint32_t alignment() const noexcept override { return kDirectAlignment; }

 private:
  friend class io_support::QueuedIo<DirectIo>;
  io_support::ReadQueue& queue() { return *queue_; }
  size_t file_count() const { return copies_.empty() ? 0 : copies_[0].size(); }
  const std::string& file_path(size_t file) const { return copies_[0][file].twins().path; }
  /// Both descriptors of every file in every copy (`mirrors`), each mirror
  /// file checked to be a copy; one warning for the files whose filesystem
  /// refuses O_DIRECT (they are read buffered).
  glmrt_status open_file_set(const char* const* paths, int32_t n_paths, std::string& error);
  /// posix_fadvise(WILLNEED) for files read buffered (in the copy a read
  /// would go to now); nothing for O_DIRECT files (the page cache is not
  /// used; the host reads ahead with submit).
  void prefetch_extent(size_t file, const glmrt_extent& extent) noexcept;
  std::string read_extent(const glmrt_extent& extent, uint64_t sequence,
                          glmrt_extent_result& result) noexcept override;
  /// The first time O_DIRECT is refused (at open or read), one warning.
  void warn_fallback(const std::string& file, const std::string& why, size_t more_files) noexcept;

  /// One copy's files, opened.
  glmrt_status open_copy(const std::vector<std::string>& paths, std::vector<TwinFile>& files,
                         std::string& error);

  const glmrt_host_services& host_;
  std::vector<io_support::MirrorEntry> mirrors_;
  io_support::ByteRateLimit::Clock::duration cap_credit_;
  std::vector<std::vector<TwinFile>> copies_;  // [copy][file]
  std::unique_ptr<io_support::CopyRouter> router_;
  std::atomic<bool> warned_{false};
  std::unique_ptr<io_support::ReadQueue> queue_;  // last: its workers stop before the rest goes
};

}  // namespace glmrt::io_odirect
