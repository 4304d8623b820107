// One MoE layer's expert slots: a fixed number of equal-sized buffers
// (huge-page blocks, 2 MiB-aligned, charged to the budget), each allocated
// the first time it is needed and then recycled. The pool knows which expert
// each slot holds (O(1) lookup by expert id), the least-recently-used order
// (an intrusive list: O(1) to touch) and which slots are pinned by a
// computation; what a slot's bytes mean is the ExpertStore's business.
#pragma once

#include <glmrt/base/huge_pages.h>
#include <glmrt/experts/slot_warmer.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace glmrt {

class ExpertSlotPool {
 public:
  /// `n_experts` ids (0..n-1) may be held; `capacity` slots of `slot_bytes`.
  ExpertSlotPool(int n_experts, int capacity, uint64_t slot_bytes, MemoryBudget* budget);
  ExpertSlotPool(ExpertSlotPool&&) noexcept = default;
  ExpertSlotPool& operator=(ExpertSlotPool&&) noexcept = default;

  int capacity() const { return capacity_; }
  uint64_t slot_bytes() const { return slot_bytes_; }
  /// Slots allocated so far (never more than capacity()).
  int allocated() const { return static_cast<int>(memory_.size()); }
  /// New slots come from `warmer`'s pool `index` when it has one ready
  /// (faulted in already); the warmer must outlive the pool's claims.
  void take_slots_from(SlotWarmer* warmer, int index) {
    warmer_ = warmer;
    warmer_index_ = index;
  }
  /// Bytes of the slots the pool mapped itself, not populated ahead: the
  /// first read into each made the kernel zero its pages on the read's path.
  uint64_t fresh_bytes() const { return fresh_bytes_; }

  /// The slot holding (or reading) expert `id`, or -1.
  int slot_of(int32_t id) const { return slot_of_[static_cast<size_t>(id)]; }
  /// The expert a slot holds, or -1.
  int32_t expert_in(int slot) const { return expert_[static_cast<size_t>(slot)]; }
  std::byte* memory(int slot) const { return memory_[static_cast<size_t>(slot)].data(); }

  /// How claim() may grow the pool. `any`: a slot not yet allocated is taken
  /// first, faulted in by the warmer if it has one ready, else mapped fresh
  /// (the first read into it pays the kernel's zeroing). `warm_only`: while
  /// the warmer is still making slots, the pool grows only with one it has
  /// ready and otherwise recycles as a full pool would, so a step never pays
  /// for fresh memory while an older slot can serve; the pool grows as fast
  /// as the warmer, off the steps' path, can fault slots in.
  enum class Growth { any, warm_only };

  /// Makes `slot` the most recently used.
  void touch(int slot);
  /// A slot for expert `id` (which no slot holds): a slot not yet allocated
  /// (allocated now), else the least recently used unpinned slot `usable`
  /// accepts, which forgets its expert. -1 when there is none. The slot
  /// becomes the most recently used.
  int claim(int32_t id, const std::function<bool(int slot)>& usable, Growth growth = Growth::any);
  /// The slot forgets its expert (its read failed, or was not wanted) and
  /// becomes the first to be claimed.
  void forget(int slot);

  void pin(int slot) { ++pins_[static_cast<size_t>(slot)]; }
  void unpin(int slot) { --pins_[static_cast<size_t>(slot)]; }
  bool pinned(int slot) const { return pins_[static_cast<size_t>(slot)] > 0; }

 private:
  HugePageBlock new_slot_memory(Growth growth);
  void unlink(int slot);
  void push_front(int slot);  // most recently used
  void push_back(int slot);   // least recently used

  int capacity_;
  uint64_t slot_bytes_;
  MemoryBudget* budget_;
  SlotWarmer* warmer_ = nullptr;
  int warmer_index_ = 0;
  uint64_t fresh_bytes_ = 0;
  std::vector<HugePageBlock> memory_;  // by slot, allocated on first claim
  std::vector<int32_t> expert_;        // by slot, -1 = none
  std::vector<int> pins_;              // by slot
  std::vector<int> slot_of_;           // by expert id, -1 = none
  std::vector<int> prev_, next_;       // LRU list by slot, -1 = end
  int head_ = -1, tail_ = -1;          // most / least recently used
};

}  // namespace glmrt
