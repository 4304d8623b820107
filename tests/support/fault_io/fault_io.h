// fault-io: an io plugin for tests. It reads with pread like io-buffered and
// injects the faults its FaultPlan assigns: EIO, short reads, added latency.
// Reads are asynchronous (ABI 1.1) but run on one reader thread in submission
// order, so which read fails never depends on timing; a batch stops at its
// first failing extent. Built a second time declaring ABI 1.0
// (FAULT_IO_ABI_MINOR=0), so the host's path for 1.0 plugins, read() only, is
// tested with the same faults.
#pragma once

#include "fault_plan.h"
#include "plain_file_io.h"
#include "read_queue.h"

#include <memory>
#include <string>
#include <vector>

namespace glmrt::fault_io {

using io_support::OpenFile;

// read() (QueuedIo's submit + wait) stops at the first failing extent; a
// short read it does not report returns GLMRT_OK, as a broken 1.0 plugin
// would. Prefetch (PlainFileIo's fadvise) is never faulted, never counted.
class FaultIo final : public io_support::PlainFileIo<FaultIo> {
 public:
  static constexpr const char* kName = "fault-io";

  /// Starts the reader thread; throws std::runtime_error when the host refuses.
  FaultIo(const glmrt_host_services& host, const FaultSettings& settings);

  uint32_t alignment() const noexcept override { return 1; }

 private:
  friend class io_support::QueuedIo<FaultIo>;
  io_support::ReadQueue& queue() { return *queue_; }
  /// Performs read `sequence` with its fault: sleeps, reads all of the extent
  /// (or half of it for EIO and short reads), then reports the fault. An
  /// unreported short read is GLMRT_OK with the bytes it delivered.
  std::string read_extent(const glmrt_extent& extent, uint64_t sequence,
                          glmrt_extent_result& result) noexcept override;
  /// An injected short read the settings say to hide passes read()'s byte
  /// count: the bug the host must catch itself.
  bool hides_short_read(uint64_t sequence) const {
    return plan_.fault_for(sequence).kind == FaultKind::short_read;
  }

  FaultPlan plan_;
  std::unique_ptr<io_support::ReadQueue> queue_;  // last: its thread stops first
};

}  // namespace glmrt::fault_io
