#include <glmrt/experts/expert_staging.h>

#include <algorithm>
#include <vector>

namespace glmrt {

ExpertStaging::ExpertStaging(uint64_t read_bytes, int64_t widest_cols, int threads,
                             MemoryBudget* budget)
    : buffer_(read_bytes, budget, "expert staging"),
      row_scratch_(scratch_bytes(widest_cols, threads), 64, budget, "expert staging"),
      threads_(std::max(1, threads)) {}

uint64_t ExpertStaging::scratch_bytes(int64_t widest_cols, int threads) {
  return static_cast<uint64_t>(threads) * static_cast<uint64_t>(widest_cols) * sizeof(float);
}

IoTicket ExpertStaging::submit(IoChannel& io, const ExpertSlotPlan& plan, ReadPriority priority) {
  std::vector<PlannedRead> reads;
  reads.reserve(plan.reads.size());
  for (const SlotRead& r : plan.reads) reads.push_back({r.file, r.span, buffer_.data() + r.at});
  return io.submit(reads, priority);
}

void ExpertStaging::convert_into(const ExpertSlotPlan& plan, std::byte* slot,
                                 const ExpertSite& site) {
  convert_expert(plan, {buffer_.data(), buffer_.size()}, slot, row_scratch_.as<float>(), threads_,
                 site);
}

void ExpertStaging::convert_from(const ExpertSlotPlan& plan, std::span<const std::byte> read,
                                 std::byte* slot, const ExpertSite& site) {
  convert_expert(plan, read, slot, row_scratch_.as<float>(), threads_, site);
}

}  // namespace glmrt
