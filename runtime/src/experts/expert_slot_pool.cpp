#include <glmrt/base/error.h>
#include <glmrt/experts/expert_slot_pool.h>

#include <utility>

namespace glmrt {

ExpertSlotPool::ExpertSlotPool(int n_experts, int capacity, uint64_t slot_bytes,
                               MemoryBudget* budget)
    : capacity_(capacity),
      slot_bytes_(slot_bytes),
      budget_(budget),
      slot_of_(static_cast<size_t>(n_experts), -1) {
  if (capacity < 1) fail("an expert slot pool needs at least one slot, got {}", capacity);
  memory_.reserve(static_cast<size_t>(capacity));
}

void ExpertSlotPool::unlink(int slot) {
  const auto s = static_cast<size_t>(slot);
  if (prev_[s] >= 0)
    next_[static_cast<size_t>(prev_[s])] = next_[s];
  else
    head_ = next_[s];
  if (next_[s] >= 0)
    prev_[static_cast<size_t>(next_[s])] = prev_[s];
  else
    tail_ = prev_[s];
  prev_[s] = next_[s] = -1;
}

void ExpertSlotPool::push_front(int slot) {
  const auto s = static_cast<size_t>(slot);
  prev_[s] = -1;
  next_[s] = head_;
  if (head_ >= 0) prev_[static_cast<size_t>(head_)] = slot;
  head_ = slot;
  if (tail_ < 0) tail_ = slot;
}

void ExpertSlotPool::push_back(int slot) {
  const auto s = static_cast<size_t>(slot);
  next_[s] = -1;
  prev_[s] = tail_;
  if (tail_ >= 0) next_[static_cast<size_t>(tail_)] = slot;
  tail_ = slot;
  if (head_ < 0) head_ = slot;
}

void ExpertSlotPool::touch(int slot) {
  if (head_ == slot) return;
  unlink(slot);
  push_front(slot);
}

HugePageBlock ExpertSlotPool::new_slot_memory(Growth growth) {
  if (warmer_) {
    const bool may_map = growth != Growth::warm_only || !warmer_->warming();
    if (HugePageBlock warm = warmer_->take(warmer_index_, may_map); warm.data()) {
      if (!warm.charged()) warm.charge_to(budget_, "expert slots");
      return warm;
    }
    if (!may_map) return {};
  }
  try {
    HugePageBlock fresh(slot_bytes_, budget_, "expert slots");
    fresh_bytes_ += fresh.size();
    return fresh;
  } catch (...) {
    if (warmer_) warmer_->cancel_reservation(warmer_index_);
    throw;
  }
}

int ExpertSlotPool::claim(int32_t id, const std::function<bool(int slot)>& usable, Growth growth) {
  int slot = -1;
  HugePageBlock memory = allocated() < capacity_ ? new_slot_memory(growth) : HugePageBlock{};
  if (memory.data()) {
    slot = allocated();
    memory_.push_back(std::move(memory));
    expert_.push_back(-1);
    pins_.push_back(0);
    prev_.push_back(-1);
    next_.push_back(-1);
    push_front(slot);
  } else {
    // Walking from the cold end usually stops at once: only pinned slots or
    // ones the caller protects are skipped.
    for (int s = tail_; s >= 0; s = prev_[static_cast<size_t>(s)]) {
      if (!pinned(s) && usable(s)) {
        slot = s;
        break;
      }
    }
    if (slot < 0) return -1;
    if (const int32_t old = expert_[static_cast<size_t>(slot)]; old >= 0)
      slot_of_[static_cast<size_t>(old)] = -1;
    touch(slot);
  }
  expert_[static_cast<size_t>(slot)] = id;
  slot_of_[static_cast<size_t>(id)] = slot;
  return slot;
}

void ExpertSlotPool::forget(int slot) {
  if (const int32_t old = expert_[static_cast<size_t>(slot)]; old >= 0)
    slot_of_[static_cast<size_t>(old)] = -1;
  expert_[static_cast<size_t>(slot)] = -1;
  unlink(slot);
  push_back(slot);
}

}  // namespace glmrt
