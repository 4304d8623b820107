// One step of an MoE layer through its pool of slots: every expert of the
// step already in a slot (or on its way, read ahead) is pinned; the misses
// are submitted straight into free slots (least recently used first, never
// one the step still needs); the caller computes each expert as soon as it
// is there, present ones first, and every slot it is done with takes the
// next miss, so a step that needs more experts than the pool holds streams
// them through it in waves and nothing is allocated outside the pool.
//
// All or nothing: a read that fails (EIO, a short read) stops the step with
// an error naming the files, offsets and experts, and nothing the step read
// stays in the pool; an expert holding a NaN or infinity fails naming
// tensor, row and file offset.
#pragma once

#include <glmrt/experts/expert_layer_pool.h>
#include <glmrt/experts/expert_slot_fill.h>
#include <glmrt/experts/expert_store_stats.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace glmrt {

/// One expert of a step in its slot: the index into the step's ids, and its views.
struct ReadyExpert {
  size_t index = 0;
  const Expert* expert = nullptr;
};
/// Called with every expert of a step that is in its slot and not yet used
/// (views valid during the call): those in memory at once, then the rest as
/// their reads land, so independent experts can be computed side by side.
using UseExperts = std::function<void(std::span<const ReadyExpert> ready)>;

/// A step's lists, kept from step to step so steps allocate nothing once
/// they have grown (one step runs at a time).
struct ExpertStepLists {
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

class ExpertStep {
 public:
  /// Prepares a step of `pool`'s layer over the distinct experts `ids`
  /// (throws naming one that is out of range): the hits are pinned, the
  /// misses listed. With `keep_pins` every slot stays pinned after run().
  ExpertStep(ExpertLayerPool& pool, std::span<const int32_t> ids, bool keep_pins,
             ExpertStepLists& lists, ExpertStoreStats& stats);
  ExpertStep(const ExpertStep&) = delete;
  ExpertStep& operator=(const ExpertStep&) = delete;
  /// Undoes a step that did not finish: reads in flight land, every slot
  /// the step read into forgets its expert, pins and marks go.
  ~ExpertStep();

  /// Calls `use` with the experts as they are in their slots, those in
  /// memory first. `reads_queued` (may be empty) runs once the first reads
  /// are submitted and the experts in memory used. Throws when a read fails
  /// or an expert is not finite.
  void run(const std::function<void()>& reads_queued, const UseExperts& use);

  /// Each expert's slot by index into `ids` (kept pinned with keep_pins).
  std::vector<int> slots() const { return slot_; }

 private:
  void pin(size_t k, int slot);
  void unpin(size_t k);
  void drop(int slot);
  /// Hands every landed expert not yet used to `use`, then frees what it
  /// can for more misses; the number used.
  size_t use_ready(const UseExperts& use);
  /// Gives every miss that can be read straight into a slot, or into a free
  /// read-ahead staging buffer, a slot, in ascending order, as long as slots
  /// are free.
  void submit_more();
  /// The position in loading_ of a read that has landed, or of the oldest.
  size_t next_arrival();
  void land(size_t position);
  /// The next expert that needs converting, read through the staging buffer.
  void convert_next();
  [[noreturn]] void fail_read(const ReadFailure& failure, size_t failed) const;

  ExpertLayerPool& pool_;
  ExpertStoreStats& stats_;
  int layer_;
  std::span<const int32_t> ids_;
  bool keep_pins_;
  bool marked_ = false, finished_ = false;
  // The lists (see ExpertStepLists), reused from step to step.
  std::vector<int>& slot_;
  std::vector<uint8_t>& pinned_;
  std::vector<size_t>& misses_;
  std::vector<size_t>& todo_;
  std::vector<size_t>& ready_;
  size_t& ready_head_;
  std::vector<size_t>& loading_;
  std::vector<int>& filled_;
  std::vector<int>& ahead_;
  std::vector<ReadyExpert>& batch_;
};

}  // namespace glmrt
