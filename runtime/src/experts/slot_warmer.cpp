#include <glmrt/experts/slot_warmer.h>

#include <algorithm>
#include <utility>

namespace glmrt {

SlotWarmer::SlotWarmer(std::vector<Pool> pools, int threads, MemoryBudget* budget)
    : budget_(budget) {
  states_.reserve(pools.size());
  for (const Pool& pool : pools)
    states_.push_back(State{.pool = pool, .handed = 0, .in_making = 0, .ready = {}});
  // The count is read from a local: a thread that finds nothing to do leaves
  // at once and lowers running_, and a loop over running_ would then start
  // fewer threads than it counted, so wait_done would wait for ever.
  const int count = std::max(threads, 1);
  running_ = count;
  threads_.reserve(static_cast<size_t>(count));
  for (int t = 0; t < count; ++t)
    threads_.emplace_back([this](const std::stop_token& stop) { run(stop); });
}

SlotWarmer::~SlotWarmer() {
  for (auto& thread : threads_) thread.request_stop();
  threads_.clear();  // joins
}

int SlotWarmer::next_pool() {
  for (size_t tried = 0; tried < states_.size(); ++tried) {
    const size_t i = (cursor_ + tried) % states_.size();
    if (states_[i].needs()) {
      cursor_ = i + 1;
      return static_cast<int>(i);
    }
  }
  return -1;
}

void SlotWarmer::run(const std::stop_token& stop) {
  for (;;) {
    int index = -1;
    uint64_t bytes = 0;
    {
      std::lock_guard lock(mutex_);
      if (!stop.stop_requested() && !failed_) index = next_pool();
      if (index >= 0) {
        ++states_[static_cast<size_t>(index)].in_making;
        bytes = states_[static_cast<size_t>(index)].pool.slot_bytes;
      }
    }
    if (index < 0) break;
    bool populated = false;
    HugePageBlock block;
    try {
      block = HugePageBlock(bytes, budget_, "expert slots");
      // A huge page at a time, so that stopping waits for one at most.
      populated = true;
      for (size_t at = 0; populated && at < block.size(); at += kHugePageBytes) {
        if (stop.stop_requested()) break;
        populated = block.populate(at, kHugePageBytes);
      }
    } catch (const std::exception&) {
      // Out of address space or budget: the pools map their own slots, as
      // without a warmer (and meet the same refusal if it is the budget).
      populated = false;
    }
    std::lock_guard lock(mutex_);
    State& state = states_[static_cast<size_t>(index)];
    --state.in_making;
    if (stop.stop_requested()) break;
    if (!populated) {
      failed_ = true;  // the kernel cannot populate, or memory ran out
      break;
    }
    if (!state.needs()) continue;  // the pool mapped its own meanwhile
    warmed_bytes_ += block.size();
    state.ready.push_back(std::move(block));
  }
  std::lock_guard lock(mutex_);
  if (--running_ == 0) done_changed_.notify_all();
}

HugePageBlock SlotWarmer::take(int index, bool reserve_if_none) {
  std::lock_guard lock(mutex_);
  State& state = states_.at(static_cast<size_t>(index));
  if (state.ready.empty() && !reserve_if_none) return {};
  ++state.handed;
  if (state.ready.empty()) return {};
  HugePageBlock block = std::move(state.ready.back());
  state.ready.pop_back();
  return block;
}

void SlotWarmer::cancel_reservation(int index) {
  std::lock_guard lock(mutex_);
  --states_.at(static_cast<size_t>(index)).handed;
}

bool SlotWarmer::warming() const {
  std::lock_guard lock(mutex_);
  return running_ > 0;
}

void SlotWarmer::wait_done() {
  std::unique_lock lock(mutex_);
  done_changed_.wait(lock, [&] { return running_ == 0; });
}

uint64_t SlotWarmer::warmed_bytes() const {
  std::lock_guard lock(mutex_);
  return warmed_bytes_;
}

}  // namespace glmrt
