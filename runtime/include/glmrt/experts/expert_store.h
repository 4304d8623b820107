// Resolves the routed experts a step needs and streams them through each MoE
// layer's pool of slots. One step of layer l: every expert already in a slot
// (or on its way, read ahead) is pinned; the misses are submitted to the io
// plugin straight into free slots (least recently used first, never one the
// step still needs); the caller computes each expert as soon as it is there,
// present ones first, and every slot it is done with takes the next miss, so
// a step that needs more experts than the pool holds streams them through it
// in waves and nothing is allocated outside the pool. prefetch() reads the
// experts a later step is predicted to need into the same slots.
//
// The pinned set sits beside the pools: the most used experts, read once
// when the engine opens into memory of their own and kept; a step finds them
// before it looks at the pool (pinned hits), and they never take a slot.
//
// A read that fails (EIO, a short read) stops the step with an error naming
// the files, offsets and experts; nothing the step read stays cached, and the
// next step reads it again. An expert holding a NaN or infinity fails naming
// tensor, row and file offset.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/experts/expert_slot_fill.h>
#include <glmrt/experts/expert_slot_plan.h>
#include <glmrt/experts/expert_slot_pool.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/experts/locked_memory.h>
#include <glmrt/history/expert_usage.h>
#include <glmrt/profile/profile.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace glmrt {

struct ExpertStoreStats {
  uint64_t pinned_hits = 0;                    // experts a step found in the pinned set
  uint64_t hits = 0;                           // experts a step found in a slot (or on their way)
  uint64_t misses = 0;                         // experts a step had to read
  uint64_t bytes_read = 0, extents_read = 0;   // of successful reads, as widened
  double read_seconds = 0;                     // sum over reads of submission to completion
  double wait_seconds = 0;                     // time steps spent waiting for reads
  double busy_seconds = 0;                     // wall time with at least one read in flight
  double convert_seconds = 0;                  // checking and converting experts into slots
  uint64_t predicted = 0, predicted_used = 0;  // prefetch predictions and how many a step used
  uint64_t prefetch_reads = 0, prefetch_reads_used = 0;  // reads ahead, and those a step used
  uint64_t streamed_steps = 0;  // steps that needed more experts than the pool holds
  uint64_t slots_allocated = 0;

  /// Pinned and slot hits over every lookup.
  double hit_rate() const {
    const uint64_t all = pinned_hits + hits + misses;
    return all ? double(pinned_hits + hits) / double(all) : 0.0;
  }
  /// Of the experts predicted for a step, the fraction the step used.
  double prediction_accuracy() const {
    return predicted ? double(predicted_used) / double(predicted) : 0.0;
  }
  /// Of the time reads were in flight, the fraction steps did not wait for.
  double overlap() const {
    return busy_seconds > 0 ? std::max(0.0, 1.0 - wait_seconds / busy_seconds) : 0.0;
  }
};

/// What pin() loaded.
struct PinnedSummary {
  uint64_t experts = 0, bytes = 0;  // bytes in memory
  uint64_t bytes_read = 0;
  double seconds = 0;
  uint64_t locked_bytes = 0;
  std::string lock_refusal;  // empty unless mlock was asked for and refused
};

/// Slots per MoE layer: `cache` kept by the LRU plus `prefetch` for reads
/// ahead (the pool holds cache + prefetch, at least one).
struct ExpertPoolSizes {
  int cache = 16;
  int prefetch = 0;
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

  /// Called for each expert of a step once it is in its slot: the index into
  /// the step's ids, and the expert's views (valid during the call).
  using UseExpert = std::function<void(size_t index, const Expert& expert)>;
  /// One expert of a step in its slot: the index into the step's ids, and its views.
  struct ReadyExpert {
    size_t index = 0;
    const Expert* expert = nullptr;
  };
  /// Called with every expert of a step that is in its slot and not yet used
  /// (views valid during the call): those in memory at once, then the rest as
  /// their reads land, so independent experts can be computed side by side.
  using UseExperts = std::function<void(std::span<const ReadyExpert> ready)>;

  /// Runs one step of `layer` over the distinct experts `ids`: calls `use`
  /// once per expert, those in memory first, the rest as their reads arrive.
  /// `reads_queued` (may be empty) runs once the step's first reads are
  /// submitted: the caller queues the next layer's prefetch there. Throws
  /// glmrt::Error when a read fails or an expert is not finite; nothing the
  /// step read is cached then.
  void run_step(int layer, std::span<const int32_t> ids, const std::function<void()>& reads_queued,
                const UseExpert& use);
  /// run_step() handing over the experts in batches (see UseExperts).
  void run_step_batches(int layer, std::span<const int32_t> ids,
                        const std::function<void()>& reads_queued, const UseExperts& use);

  /// The experts `ids` of `layer` (most likely first) will probably be
  /// needed by its next step: reads up to the layer's prefetch slots of them
  /// ahead into slots (or, when they cannot be read ahead, hints the plugin).
  /// A wrong guess costs a read, never a result.
  void prefetch(int layer, std::span<const int32_t> ids);

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
    Held(ExpertStore& store, int layer) : store_(&store), layer_(layer) {}
    ExpertStore* store_;
    int layer_;
    std::vector<int> slots_;
    std::vector<Expert> experts_;
  };
  /// The experts `ids` of `layer`, all at once (they must fit the pool).
  Held acquire(int layer, std::span<const int32_t> ids);

  /// Loads `keys` into the pinned set (their reads submitted at once, with a
  /// progress bar on a terminal), where they stay for the store's life; with
  /// `lock`, mlocks them (a refusal is reported in the summary, not thrown).
  /// Experts already pinned are skipped. Throws like a step when a read
  /// fails or an expert is not finite; nothing of that layer is pinned then.
  const PinnedSummary& pin(std::span<const ExpertKey> keys, bool lock);
  const PinnedSummary& pinned() const { return pinned_summary_; }
  bool is_pinned(int layer, int32_t id) const;
  /// MoE rows (true where the layer has routed experts).
  std::vector<bool> expert_rows() const;
  /// LRU slots per layer (memory.expert_cache, as sized).
  int cache_per_layer() const { return sizes_.cache; }

  const ExpertStoreStats& stats() const;
  const ExpertPoolSizes& sizes() const { return sizes_; }
  /// Slots in `layer`'s pool, and the bytes of each.
  int pool_capacity() const { return capacity_; }
  uint64_t slot_bytes(int layer) const;
  uint64_t largest_slot_bytes() const;
  /// Bytes every pool takes when full, plus the staging buffer.
  uint64_t full_pool_bytes() const;
  IoChannel& io() { return io_; }

 private:
  enum class SlotState : uint8_t { empty, loading, ready };
  struct SlotInfo {
    SlotState state = SlotState::empty;
    bool read_ahead = false;  // filled by prefetch() and not yet used by a step
    IoTicket ticket;          // while loading
    Expert expert;            // when ready
  };
  struct Layer {
    std::vector<ExpertSlotPlan> plans;  // by expert id
    std::unique_ptr<ExpertSlotPool> pool;
    std::vector<SlotInfo> slots;
    std::vector<uint8_t> wanted;  // by expert id: the running step still needs it
    std::vector<int32_t> predicted;
    std::vector<int> pinned_of;  // by expert id: index into pinned, -1 = not pinned
    std::vector<Expert> pinned;  // views into pinned_memory
    HugePageBlock pinned_memory;
  };
  class Step;
  /// The running step's lists, kept from step to step so steps allocate
  /// nothing once they have grown (one step runs at a time).
  struct StepLists {
    std::vector<int> slot;        // by index: its slot, -1 before it has one
    std::vector<uint8_t> pinned;  // by index
    std::vector<size_t> misses;   // indices the step reads
    std::vector<size_t> todo;     // misses without a slot yet, ascending
    std::vector<size_t> ready;    // landed, not yet used (from ready_head on)
    size_t ready_head = 0;
    std::vector<size_t> loading;     // reads in flight, in submission order
    std::vector<int> filled;         // slots this step read into
    std::vector<int> ahead;          // slots read ahead that this step uses
    std::vector<ReadyExpert> batch;  // handed to the caller
  };

  Layer& layer_at(int layer);
  /// One step over `ids` (expert_step.cpp); with `keep_pins` the slots stay
  /// pinned and are returned by index.
  std::vector<int> run(int layer, std::span<const int32_t> ids,
                       const std::function<void()>& reads_queued, const UseExperts& use,
                       bool keep_pins);
  /// Claims a slot for expert `id` that the running step does not need; lets
  /// a read ahead land and takes its slot when that is all there is. -1 when
  /// every slot is pinned or needed.
  int claim_slot(Layer& l, int32_t id);
  IoTicket submit_direct(Layer& l, int slot, const ExpertSlotPlan& plan);
  /// Waits for a slot's read; nothing on success.
  std::optional<ReadFailure> wait_slot(Layer& l, int slot);
  /// Completes a direct read: scales checked, views made. Throws on a bad expert.
  void finish_slot(Layer& l, int layer, int slot);
  /// Reads one expert through the staging buffer and converts it into `slot`.
  /// Nothing on success; throws on a bad expert.
  std::optional<ReadFailure> read_converted(Layer& l, int layer, int slot);
  /// The slot forgets its expert (a read still in flight lands first).
  void drop_slot(Layer& l, int slot);
  /// Reads ahead of `layer` that have landed become ready (failed ones are dropped).
  void reap(Layer& l, int layer);
  void count_read(const ExpertSlotPlan& plan);
  /// Reads and checks one layer's experts into its pinned memory
  /// (expert_store_pinning.cpp).
  void pin_layer(int layer, std::span<const int32_t> ids, uint64_t& done, class ProgressBar& bar);

  std::vector<std::vector<ExpertLayout>> layouts_;
  IoChannel& io_;
  WeightPrecision bits_;
  ExpertPoolSizes sizes_;
  int capacity_;
  MemoryBudget* budget_;
  int threads_;
  HugePageBlock staging_;  // one expert's raw bytes, for experts that need conversion
  AlignedBlock row_scratch_;
  mutable ExpertStoreStats stats_;
  StepLists step_lists_;
  PinnedSummary pinned_summary_;
  LockedMemory locked_;
  std::vector<Layer> layers_;  // last: their in-flight tickets go before the rest
};

}  // namespace glmrt
