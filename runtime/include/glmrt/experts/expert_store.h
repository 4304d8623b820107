// The routed experts as the model uses them: one pool of slots per MoE layer
// (expert_layer_pool.h), steps through it (expert_step.h), reading ahead
// (expert_read_ahead.h) and the pinned set beside the pools
// (pinned_experts.h), composed. A step of layer l uses the pinned experts
// first, from their own memory, and runs the rest through the layer's pool;
// prefetch() reads the experts a later step is predicted to need into the
// same slots.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/base/weight_precision.h>
#include <glmrt/experts/expert_key.h>
#include <glmrt/experts/expert_layer_pool.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/experts/expert_read_ahead.h>
#include <glmrt/experts/expert_slot_fill.h>
#include <glmrt/experts/expert_staging.h>
#include <glmrt/experts/expert_step.h>
#include <glmrt/experts/expert_store_stats.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/experts/pinned_experts.h>
#include <glmrt/experts/read_ahead_depth.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace glmrt {

/// Slots per MoE layer: `cache` kept by the LRU plus `prefetch` for reads
/// ahead (the pool holds cache + prefetch, at least one).
struct ExpertPoolSizes {
  int cache = 0;
  int prefetch = 0;
  /// `memory.prefetch: auto`: each layer's depth chosen from what is
  /// measured (read_ahead_depth.h), else every prefetch slot read ahead.
  bool auto_depth = false;
};

class ExpertStore {
 public:
  /// Plans every expert's reads and slot for `io`; checks that the pools fit
  /// the budget (resident part included) and fails naming the arithmetic
  /// when they do not. Slots themselves are allocated when first used.
  ExpertStore(std::vector<std::vector<ExpertLayout>> layouts, IoChannel& io, WeightPrecision bits,
              ExpertPoolSizes sizes, MemoryBudget* budget, int threads);
  ExpertStore(const ExpertStore&) = delete;
  ExpertStore& operator=(const ExpertStore&) = delete;
  ~ExpertStore();

  using ReadyExpert = glmrt::ReadyExpert;
  using UseExperts = glmrt::UseExperts;

  /// Runs one step of `layer` over the distinct experts `ids`, handing them
  /// to `use` in batches (see UseExperts): the pinned ones and those in
  /// memory first, the rest as their reads arrive. `reads_queued` (may be
  /// empty) runs once the step's first reads are submitted and the experts
  /// in memory have been used: the caller queues the next layer's prefetch
  /// there, knowing their output. Throws glmrt::Error when a read
  /// fails or an expert is not finite; nothing the step read is cached then.
  void run_step_batches(int layer, std::span<const int32_t> ids,
                        const std::function<void()>& reads_queued, const UseExperts& use);

  /// The experts `ids` of `layer` (most likely first) will probably be
  /// needed by its next step: the prediction is kept to measure against
  /// that step (accuracy counts pinned experts too), and the ranks the
  /// read-ahead depth chooses are read ahead into slots, up to the layer's
  /// prefetch slots (or, when they cannot be read ahead, hinted to the
  /// plugin). A wrong guess costs a read, never a result, and never takes
  /// the slot of one of the last memory.expert_cache experts used.
  void prefetch(int layer, std::span<const int32_t> ids);

  /// The experts `ids` of `layer` (most likely first) will probably be
  /// needed by the next forward step, guessed before that step begins (while
  /// this step's last MoE layer runs): read ahead as prefetch() reads, and
  /// measured apart from prefetch()'s guesses (next_step_predicted). A
  /// prefetch() for the layer before it runs refines the guess. True when
  /// reads were submitted.
  bool prefetch_next_step(int layer, std::span<const int32_t> ids);
  /// The step's last MoE layer has all its experts: the drive's idle gap to
  /// the next step's first read opens (0 when `next_step_reads_submitted`).
  void step_reads_done(bool next_step_reads_submitted);

  /// Experts held in their slots (pinned) until this is destroyed.
  class Held {
   public:
    Held(Held&& other) noexcept;
    Held& operator=(Held&&) = delete;
    ~Held();
    const Expert& operator[](size_t k) const { return experts_[k]; }
    size_t size() const { return experts_.size(); }

   private:
    friend class ExpertStore;
    explicit Held(ExpertLayerPool& pool) : pool_(&pool) {}
    ExpertLayerPool* pool_;
    std::vector<int> slots_;  // -1 for experts of the pinned set
    std::vector<Expert> experts_;
  };
  /// The experts `ids` of `layer`, all at once (they must fit the pool).
  Held acquire(int layer, std::span<const int32_t> ids);

  /// Loads `keys` into the pinned set (see PinnedExperts::pin), where they
  /// stay for the store's life.
  const PinnedSummary& pin(std::span<const ExpertKey> keys, bool lock);
  const PinnedSummary& pinned() const { return pinned_.summary(); }
  bool is_pinned(int layer, int32_t id) const { return pinned_.find(layer, id) != nullptr; }
  /// Which experts of `layer` are in RAM now, one flag per expert into
  /// `in_memory` (size: the layer's experts): pinned, held by a slot, or
  /// arriving in one (its read submitted); a prediction not yet read is not.
  /// All 0 for a layer without routed experts. The narrow query cache-aware
  /// routing asks (routing.cache_bias).
  void in_memory(int layer, std::span<uint8_t> in_memory) const;
  /// MoE rows (true where the layer has routed experts).
  std::vector<bool> expert_rows() const;
  /// LRU slots per layer (memory.expert_cache, as sized).
  int cache_per_layer() const { return sizes_.cache; }

  /// Waits until the slots the budget allows are faulted in (when it has a
  /// limit): the zeroing then costs the load, not the first steps.
  void finish_warming();
  /// Seconds finish_warming() waited.
  double warming_wait_seconds() const { return warming_wait_seconds_; }
  const ExpertStoreStats& stats() const;
  /// Each layer's read-ahead depth as chosen so far.
  const ReadAheadDepth& read_ahead_depth() const { return depth_; }
  const ExpertPoolSizes& sizes() const { return sizes_; }
  /// Slots in each layer's pool, and the bytes of each slot.
  int pool_capacity() const { return capacity_; }
  uint64_t slot_bytes(int layer) const;
  uint64_t largest_slot_bytes() const;

 private:
  ExpertLayerPool& pool_at(int layer);
  /// Counts `layer`'s last predictions against the step's experts `ids`.
  void settle_prediction(int layer, std::span<const int32_t> ids);
  /// Reads ahead the ranks of `ids` the layer's depth chooses (not pinned ones).
  void read_ahead(int layer, ExpertLayerPool& pool, std::span<const int32_t> ids,
                  ReadAheadDepth& depth);
  /// Which of `ids` are not in memory (nor on their way) now.
  std::vector<uint8_t> absent_now(int layer, const ExpertLayerPool& pool,
                                  std::span<const int32_t> ids) const;
  /// One step over `ids`, pinned experts first; with `keep_pins` the slots
  /// stay pinned and are returned by index (-1 for pinned experts).
  std::vector<int> run(int layer, std::span<const int32_t> ids,
                       const std::function<void()>& reads_queued, const UseExperts& use,
                       bool keep_pins);

  std::vector<std::vector<ExpertLayout>> layouts_;  // the pools' plans point into them
  IoChannel& io_;
  ExpertPoolSizes sizes_;
  int capacity_;
  mutable ExpertStoreStats stats_;
  ExpertStaging staging_;
  ReadAheadStaging ahead_staging_;  // before the pools: they free its buffers
  ExpertStepLists step_lists_;
  ExpertReadAhead read_ahead_;
  ReadAheadDepth depth_;
  /// By row: the last prediction not yet measured, and which of its experts
  /// were not in memory when it was made.
  struct Prediction {
    std::vector<int32_t> ids;
    std::vector<uint8_t> absent;
    // What a refinement replaced: measured apart, and what the depth learns
    // from (it decided the reads issued earliest).
    std::vector<int32_t> first_guess;
    std::vector<uint8_t> first_absent;
  };
  std::vector<Prediction> predictions_;
  /// By row: the experts prefetch_next_step() guessed, not yet measured,
  /// and the depth those guesses are read ahead to (their accuracy is their own).
  std::vector<Prediction> next_step_predictions_;
  ReadAheadDepth next_step_depth_;
  /// The drive's busy share, smoothed over the last predictions (negative:
  /// not measured yet), and the clock and busy seconds it was last taken at.
  double drive_busy_share_ = -1;
  std::chrono::steady_clock::time_point drive_sampled_at_;
  double drive_busy_at_ = 0;
  double drive_waited_at_ = 0;  // the steps' waits on reads at that sample
  /// The costs the read-ahead depth weighs now (updates the busy share).
  ReadAheadCosts measured_costs();
  PinnedExperts pinned_;
  /// Faults the pools' slots in ahead of use; outlives the pools, which take from it.
  std::unique_ptr<SlotWarmer> warmer_;
  double warming_wait_seconds_ = 0;
  /// By row, null for dense layers. Last: their in-flight reads land before the rest goes.
  std::vector<std::unique_ptr<ExpertLayerPool>> pools_;
};

}  // namespace glmrt
