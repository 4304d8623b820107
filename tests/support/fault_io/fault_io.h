// fault-io: an io plugin for tests. It reads with pread like io-buffered, one
// extent after another, and injects the faults its FaultPlan assigns: EIO,
// short reads, added latency. Reads run on the calling thread, in order, so
// which read fails never depends on timing.
#pragma once

#include "fault_plan.h"

#include <glmrt/plugin/io.h>

#include <string>
#include <vector>

namespace glmrt::fault_io {

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

/// How one read ended: status, and the error text when it is not GLMRT_OK.
struct ReadOutcome {
  glmrt_status status = GLMRT_OK;
  std::string error;
};

class FaultIo final : public plugin::Io {
 public:
  explicit FaultIo(const FaultSettings& settings) : plan_(settings) {}

  glmrt_status open_files(const char* const* paths, int32_t n_paths) noexcept override;
  /// Reads the extents in order and stops at the first that fails.
  glmrt_status read(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  /// posix_fadvise(WILLNEED), as io-buffered; never faulted, never counted.
  void prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  uint32_t alignment() const noexcept override { return 1; }
  const char* last_error() const noexcept override { return error_.c_str(); }
  // The object was made with `new` in create(); this is its one owner.
  void destroy() noexcept override { delete this; }

 private:
  /// Empty when the extent names an open file and a destination.
  std::string check_extent(const glmrt_extent& extent, int64_t index) const;
  /// Performs one read with its fault: sleeps, reads all of the extent (or
  /// half of it for EIO and short reads), then reports the fault.
  ReadOutcome read_extent(const glmrt_extent& extent, const Fault& fault) const;

  FaultPlan plan_;
  std::vector<OpenFile> files_;
  bool opened_ = false;
  std::string error_;
};

}  // namespace glmrt::fault_io
