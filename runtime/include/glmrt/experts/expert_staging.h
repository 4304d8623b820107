// The one buffer an expert that needs converting (its checkpoint is not in
// the kernels' layout) is read into before it is checked and converted into
// its slot or its pinned memory, and the row scratch of that conversion.
// One expert goes through it at a time: each read into it is waited for
// before the next is submitted.
#pragma once

#include <glmrt/base/huge_pages.h>
#include <glmrt/base/memory.h>
#include <glmrt/experts/expert_slot_fill.h>
#include <glmrt/experts/expert_slot_plan.h>
#include <glmrt/experts/io_channel.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt {

class ExpertStaging {
 public:
  /// No buffer: every expert is read straight into its slot.
  ExpertStaging() = default;
  /// Room for an expert of `read_bytes` and for `threads` converting rows
  /// of `widest_cols`, charged to `budget`.
  ExpertStaging(uint64_t read_bytes, int64_t widest_cols, int threads, MemoryBudget* budget);

  /// The row scratch `threads` rows of `widest_cols` take.
  static uint64_t scratch_bytes(int64_t widest_cols, int threads);

  /// Submits `plan`'s reads into the buffer (wait for them before convert_into).
  IoTicket submit(IoChannel& io, const ExpertSlotPlan& plan,
                  ReadPriority priority = ReadPriority::ahead);
  /// Checks and converts the expert the buffer holds into `slot`; throws
  /// naming tensor, row and file offset of a NaN or infinity.
  void convert_into(const ExpertSlotPlan& plan, std::byte* slot, const ExpertSite& site);
  /// The same for an expert read into `read` (a read ahead's buffer), with
  /// this staging's row scratch.
  void convert_from(const ExpertSlotPlan& plan, std::span<const std::byte> read, std::byte* slot,
                    const ExpertSite& site);

 private:
  HugePageBlock buffer_;
  AlignedBlock row_scratch_;
  int threads_ = 1;
};

}  // namespace glmrt
