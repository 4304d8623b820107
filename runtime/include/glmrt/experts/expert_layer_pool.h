// One MoE layer's routed experts and its pool of slots: every expert's reads
// planned once, what each slot is doing (empty, loading, ready; read ahead or
// not), which experts the running step still needs, and filling a slot —
// read straight into it, or through the staging buffer and converted. The
// slots' memory and LRU order are the ExpertSlotPool's; which expert is read
// when is the step's (expert_step.h) and the read-ahead's (expert_read_ahead.h).
#pragma once

#include <glmrt/experts/expert_layout.h>
#include <glmrt/experts/expert_slot_fill.h>
#include <glmrt/experts/expert_slot_plan.h>
#include <glmrt/experts/expert_slot_pool.h>
#include <glmrt/experts/expert_staging.h>
#include <glmrt/experts/expert_store_stats.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/experts/read_ahead_staging.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

namespace glmrt {

class ExpertLayerPool {
 public:
  enum class State : uint8_t { empty, loading, ready };
  struct Slot {
    State state = State::empty;
    bool read_ahead = false;   // filled by a read ahead and not yet used by a step
    uint64_t ahead_bytes = 0;  // the read ahead's bytes, while read_ahead
    uint64_t last_use = 0;     // when a step last used the expert (the pool's use clock; 0: never)
    int staged = -1;           // the read-ahead staging buffer a read to convert lands in
    IoTicket ticket;           // while loading
    // A staged read that reap() saw land and waited for (so the drive is not
    // counted busy while it waits to be converted), and how it ended.
    bool settled = false;
    std::optional<ReadFailure> settled_failure;
    Expert expert;  // when ready
  };

  /// Plans the reads of layer `layer`'s experts (`layouts`, which must
  /// outlive the pool) for `io`, converted at `bits`; `capacity` slots,
  /// allocated when first claimed, of which `cache_slots` hold the experts
  /// steps used last: a read ahead never takes one of those (see
  /// claim_guess). Conversions go through `staging`; counts go to `stats`.
  ExpertLayerPool(int layer, const std::vector<ExpertLayout>& layouts, IoChannel& io,
                  WeightPrecision bits, int capacity, int cache_slots, MemoryBudget* budget,
                  ExpertStaging& staging, ReadAheadStaging& ahead_staging, ExpertStoreStats& stats);
  ExpertLayerPool(const ExpertLayerPool&) = delete;
  ExpertLayerPool& operator=(const ExpertLayerPool&) = delete;

  int layer() const { return layer_; }
  int32_t n_experts() const { return static_cast<int32_t>(plans_.size()); }
  const ExpertSlotPlan& plan(int32_t id) const { return plans_[static_cast<size_t>(id)]; }
  const std::vector<std::filesystem::path>& files() const { return io_.files(); }
  int capacity() const { return pool_.capacity(); }
  int allocated() const { return pool_.allocated(); }
  /// New slots come from `warmer`'s pool `index` when it has one ready.
  void take_slots_from(SlotWarmer* warmer, int index) { pool_.take_slots_from(warmer, index); }
  /// Bytes of slots mapped on a step's path, not faulted in ahead.
  uint64_t fresh_slot_bytes() const { return pool_.fresh_bytes(); }
  /// Bytes of each slot (the largest expert's).
  uint64_t slot_bytes() const { return pool_.slot_bytes(); }
  /// The largest expert read through the staging buffer (0: every one is
  /// read straight into its slot), and the widest matrix among those.
  uint64_t staging_bytes() const { return staging_bytes_; }
  int64_t widest_converted_cols() const { return widest_converted_cols_; }

  /// The slot holding (or reading) expert `id`, or -1; the expert in `slot`, or -1.
  int slot_of(int32_t id) const { return pool_.slot_of(id); }
  int32_t expert_in(int slot) const { return pool_.expert_in(slot); }
  Slot& slot(int s) { return slots_[static_cast<size_t>(s)]; }
  void touch(int slot) { pool_.touch(slot); }
  void pin(int slot) { pool_.pin(slot); }
  void unpin(int slot) { pool_.unpin(slot); }

  /// Marks expert `id` as needed (or no longer) by the running step: its
  /// slot is never claimed for another expert meanwhile.
  void want(int32_t id, bool wanted) { wanted_[static_cast<size_t>(id)] = wanted ? 1 : 0; }
  bool wanted(int32_t id) const { return wanted_[static_cast<size_t>(id)] != 0; }

  /// The experts the next step is predicted to need: claim_guess() takes
  /// none of their slots. forget_prediction() when that step begins.
  void predict(std::span<const int32_t> ids) { predicted_.assign(ids.begin(), ids.end()); }
  void forget_prediction() { predicted_.clear(); }

  /// A step used the expert in `slot` (the LRU part holds the last
  /// `cache_slots` experts used; a miss on one a read ahead evicted is counted).
  void mark_used(int slot);

  /// A slot for expert `id` that the running step does not need; lets a read
  /// ahead land and takes its slot when that is all there is. -1 when every
  /// slot is pinned or needed.
  int claim_for_step(int32_t id);
  /// A slot for expert `id` that is neither needed nor loading, one outside
  /// the last `cache_slots` used first; -1 when there is none. Throws when a
  /// new slot cannot be allocated.
  int claim_idle(int32_t id);
  /// A slot for a guess, expert `id`: never one holding an expert the steps
  /// used among the last `cache_slots` (so reading ahead never costs the LRU
  /// part a hit it would have had), a predicted one, a needed one or a
  /// loading one. -1 when there is none. Throws as claim_idle does.
  int claim_guess(int32_t id);
  /// Submits the reads of the expert `slot` was claimed for straight into it.
  void start_read(int slot, bool read_ahead);
  /// Reads the expert `slot` was claimed for, which needs converting, into
  /// read-ahead staging buffer `buffer` (taken for this slot): a read ahead,
  /// or a step's miss; finish() converts it into the slot and frees the buffer.
  void start_staged_read(int slot, int buffer, bool read_ahead);
  /// Submits the slot's planned reads into `base` (its slot or a staging
  /// buffer): a step's miss urgent, ahead of queued guesses (io ABI 1.6).
  void submit_reads_into(int slot, std::byte* base, bool read_ahead);
  /// Gives up a read ahead still loading in a slot that no step wants nor
  /// the current prediction names (a guess its layer's router disproved)
  /// where the io plugin has not started it (ABI 1.6): the slot and its
  /// staging buffer are free at once; a part already at the drive is
  /// waited for. False when nothing could be given up.
  bool cancel_unused_guess(bool staged_only);
  /// A read-ahead staging buffer for the expert in `slot`, or -1 when every
  /// one holds a read some step may still use (a landed guess that nothing
  /// wants is dropped to free one, in any layer).
  int take_staging(int slot);
  /// Whether take_staging() would find a buffer (dropping such a guess).
  bool staging_free();
  /// Whether the slot's read has completed (waiting will not block).
  bool landed(int slot) {
    Slot& s = slots_[static_cast<size_t>(slot)];
    return s.settled || io_.poll(s.ticket);
  }
  /// Waits for the slot's read; nothing on success.
  std::optional<ReadFailure> wait(int slot);
  /// Completes a read into `slot` (or into its staging buffer: converted
  /// into the slot now, on this thread): scales checked, views made.
  /// Throws on a bad expert.
  void finish(int slot);
  /// Reads the expert `slot` was claimed for through the staging buffer and
  /// converts it into the slot. Nothing on success; throws on a bad expert.
  std::optional<ReadFailure> read_converted(int slot);
  /// The slot forgets its expert (a read still in flight lands first).
  void drop(int slot);
  /// Reads ahead that have landed become ready (failed ones are dropped);
  /// those that need converting stay as they landed until a step uses them.
  void reap();
  /// Drops one landed read ahead still waiting in a staging buffer that no
  /// step needs and the current prediction does not name (its buffer is
  /// free again); false when there is none.
  bool drop_landed_staged_guess();
  /// Adds expert `id`'s reads to the bytes and extents read.
  void count_read(int32_t id);

 private:
  bool wanted_in(int slot) const;
  bool predicted(int32_t id) const;
  /// The smallest last_use among the last `cache_slots` experts used (a slot
  /// whose last_use is at least this holds one of them); max when none is kept.
  uint64_t recent_use_floor() const;
  /// Cancels the read ahead loading in `slot` (see cancel_unused_guess).
  bool cancel_guess(int slot);
  /// The claim when it succeeds: the slot's state reset (an unused read
  /// ahead it held counted as wasted).
  int claimed(int slot);
  void reset(int slot);

  int layer_;
  int cache_slots_;
  uint64_t use_clock_ = 0;
  IoChannel& io_;
  ExpertStaging& staging_;
  ReadAheadStaging& ahead_staging_;
  ExpertStoreStats& stats_;
  std::vector<ExpertSlotPlan> plans_;  // by expert id
  uint64_t staging_bytes_ = 0;
  int64_t widest_converted_cols_ = 0;
  ExpertSlotPool pool_;
  std::vector<Slot> slots_;      // after pool_: their in-flight reads land before its memory goes
  std::vector<uint8_t> wanted_;  // by expert id
  std::vector<uint8_t> evicted_by_guess_;  // by expert id: a read ahead took its slot
  std::vector<int32_t> predicted_;
};

}  // namespace glmrt
