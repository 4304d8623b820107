#include <glmrt/experts/expert_store_stats.h>

namespace glmrt {

ExpertStoreStats expert_stats_since(const ExpertStoreStats& now, const ExpertStoreStats& before) {
  // Counters only grow, but a store reset between the snapshots must not wrap.
  const auto less = [](uint64_t a, uint64_t b) { return a > b ? a - b : uint64_t{0}; };
  const auto less_seconds = [](double a, double b) { return a > b ? a - b : 0.0; };
  ExpertStoreStats d;
  d.pinned_hits = less(now.pinned_hits, before.pinned_hits);
  d.hits = less(now.hits, before.hits);
  d.misses = less(now.misses, before.misses);
  d.bytes_read = less(now.bytes_read, before.bytes_read);
  d.extents_read = less(now.extents_read, before.extents_read);
  d.read_seconds = less_seconds(now.read_seconds, before.read_seconds);
  d.wait_seconds = less_seconds(now.wait_seconds, before.wait_seconds);
  d.busy_seconds = less_seconds(now.busy_seconds, before.busy_seconds);
  d.convert_seconds = less_seconds(now.convert_seconds, before.convert_seconds);
  d.predicted = less(now.predicted, before.predicted);
  d.predicted_used = less(now.predicted_used, before.predicted_used);
  d.prefetch_reads = less(now.prefetch_reads, before.prefetch_reads);
  d.prefetch_reads_used = less(now.prefetch_reads_used, before.prefetch_reads_used);
  d.prefetch_bytes = less(now.prefetch_bytes, before.prefetch_bytes);
  d.prefetch_bytes_wasted = less(now.prefetch_bytes_wasted, before.prefetch_bytes_wasted);
  d.prefetch_reads_late = less(now.prefetch_reads_late, before.prefetch_reads_late);
  d.displaced_rereads = less(now.displaced_rereads, before.displaced_rereads);
  d.urgent_reads = less(now.urgent_reads, before.urgent_reads);
  d.cancelled_reads = less(now.cancelled_reads, before.cancelled_reads);
  d.cancelled_bytes = less(now.cancelled_bytes, before.cancelled_bytes);
  d.ahead_finished = less(now.ahead_finished, before.ahead_finished);
  d.ahead_finish_seconds = less_seconds(now.ahead_finish_seconds, before.ahead_finish_seconds);
  d.first_guesses = less(now.first_guesses, before.first_guesses);
  d.first_guesses_used = less(now.first_guesses_used, before.first_guesses_used);
  d.next_step_predicted = less(now.next_step_predicted, before.next_step_predicted);
  d.next_step_predicted_used = less(now.next_step_predicted_used, before.next_step_predicted_used);
  d.step_gaps = less(now.step_gaps, before.step_gaps);
  d.idle_between_steps_seconds =
      less_seconds(now.idle_between_steps_seconds, before.idle_between_steps_seconds);
  d.streamed_steps = less(now.streamed_steps, before.streamed_steps);
  d.fresh_slot_bytes = less(now.fresh_slot_bytes, before.fresh_slot_bytes);
  d.slots_allocated = now.slots_allocated;
  d.warmed_slot_bytes = now.warmed_slot_bytes;
  return d;
}

}  // namespace glmrt
