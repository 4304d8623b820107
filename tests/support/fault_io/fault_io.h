// fault-io: an io plugin for tests. It reads with pread like io-buffered and
// injects the faults its FaultPlan assigns: EIO, short reads, added latency.
// Reads are asynchronous (ABI 1.1) but run on one reader thread in submission
// order, so which read fails never depends on timing; a batch stops at its
// first failing extent. Built a second time declaring ABI 1.0
// (FAULT_IO_ABI_MINOR=0), so the host's path for 1.0 plugins, read() only, is
// tested with the same faults.
#pragma once

#include "fault_plan.h"
#include "open_file.h"
#include "read_queue.h"

#include <glmrt/plugin/io.h>

#include <memory>
#include <string>
#include <vector>

namespace glmrt::fault_io {

using io_support::OpenFile;

class FaultIo final : public plugin::Io, public io_support::ExtentReader {
 public:
  /// Starts the reader thread; throws std::runtime_error when the host refuses.
  FaultIo(const glmrt_host_services& host, const FaultSettings& settings);

  glmrt_status open_files(const char* const* paths, int32_t n_paths) noexcept override;
  /// submit + wait; stops at the first failing extent. A short read it does
  /// not report returns GLMRT_OK, as a broken 1.0 plugin would.
  glmrt_status read(const glmrt_extent* extents, int64_t n_extents) noexcept override;
  /// posix_fadvise(WILLNEED), as io-buffered; never faulted, never counted.
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
  /// Performs read `sequence` with its fault: sleeps, reads all of the extent
  /// (or half of it for EIO and short reads), then reports the fault. An
  /// unreported short read is GLMRT_OK with the bytes it delivered.
  std::string read_extent(const glmrt_extent& extent, uint64_t sequence,
                          glmrt_extent_result& result) noexcept override;
  glmrt_status submit_numbered(const glmrt_extent* extents, int64_t n_extents,
                               glmrt_extent_result* results, glmrt_io_ticket* ticket,
                               uint64_t* first_read);

  FaultPlan plan_;
  std::vector<OpenFile> files_;
  bool opened_ = false;
  std::string error_;
  std::unique_ptr<io_support::ReadQueue> queue_;  // last: its thread stops first
};

}  // namespace glmrt::fault_io
