#include <glmrt/base/error.h>
#include <glmrt/experts/expert_read_ahead.h>

#include <vector>

namespace glmrt {

void ExpertReadAhead::prefetch(ExpertLayerPool& pool, std::span<const int32_t> ids) {
  if (slots_per_layer_ <= 0 || ids.empty()) return;
  pool.reap();
  for (int32_t id : ids)
    if (id >= 0 && id < pool.n_experts())
      if (const int present = pool.slot_of(id); present >= 0)
        pool.touch(present);  // keep it for the step that is coming
  int issued = 0;
  std::vector<PlannedRead> hints;
  for (int32_t id : ids) {
    if (issued >= slots_per_layer_) break;
    if (id < 0 || id >= pool.n_experts() || pool.slot_of(id) >= 0) continue;
    const ExpertSlotPlan& plan = pool.plan(id);
    if (!io_.asynchronous() || (!plan.direct && !pool.staging_free())) {
      // Cannot be read ahead into a slot (a 1.0 plugin reads only when
      // asked; every read-ahead staging buffer is busy): let the plugin warm
      // its cache.
      for (const SlotRead& r : plan.reads) hints.push_back({r.file, r.span, nullptr});
      ++issued;
      continue;
    }
    int slot = -1;
    try {
      slot = pool.claim_guess(id);
    } catch (const Error&) {
      break;  // no memory for another slot now: reading ahead is only ever a guess
    }
    if (slot < 0) break;
    if (plan.direct) {
      pool.start_read(slot, /*read_ahead=*/true);
    } else {
      // Converted when a step first uses it (ExpertLayerPool::finish), on
      // the thread that runs the model.
      const int taken = pool.take_staging(slot);
      if (taken < 0) {
        pool.drop(slot);
        break;
      }
      pool.start_staged_read(slot, taken, /*read_ahead=*/true);
    }
    ++issued;
    ++stats_.prefetch_reads;
  }
  if (!hints.empty()) io_.hint(hints);
}

}  // namespace glmrt
