#include <glmrt/base/error.h>
#include <glmrt/experts/expert_read_ahead.h>

#include <vector>

namespace glmrt {

void ExpertReadAhead::prefetch(ExpertLayerPool& pool, std::span<const int32_t> ids) {
  pool.predict(ids);
  if (slots_per_layer_ <= 0) return;
  pool.reap();
  int issued = 0;
  std::vector<PlannedRead> hints;
  for (int32_t id : ids) {
    if (issued >= slots_per_layer_) break;
    if (id < 0 || id >= pool.n_experts()) continue;
    if (const int present = pool.slot_of(id); present >= 0) {
      pool.touch(present);  // keep it for the step that is coming
      continue;
    }
    const ExpertSlotPlan& plan = pool.plan(id);
    if (!plan.direct || !io_.asynchronous()) {
      // Cannot be read ahead into a slot (staging is one buffer; a 1.0
      // plugin reads only when asked): let the plugin warm its cache.
      for (const SlotRead& r : plan.reads) hints.push_back({r.file, r.span, nullptr});
      ++issued;
      continue;
    }
    int slot = -1;
    try {
      slot = pool.claim_idle(id);
    } catch (const Error&) {
      break;  // no memory for another slot now: reading ahead is only ever a guess
    }
    if (slot < 0) break;
    pool.start_read(slot, /*read_ahead=*/true);
    ++issued;
    ++stats_.prefetch_reads;
  }
  if (!hints.empty()) io_.hint(hints);
}

}  // namespace glmrt
