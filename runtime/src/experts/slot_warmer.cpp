#include <glmrt/experts/slot_warmer.h>

#include <sys/resource.h>
#include <unistd.h>

#include <utility>

namespace glmrt {

SlotWarmer::SlotWarmer(std::vector<Pool> pools) {
  states_.reserve(pools.size());
  for (const Pool& pool : pools) states_.push_back(State{.pool = pool, .handed = 0, .ready = {}});
  thread_ = std::jthread([this](const std::stop_token& stop) { run(stop); });
}

SlotWarmer::~SlotWarmer() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

int SlotWarmer::next_pool(size_t& cursor) const {
  for (size_t tried = 0; tried < states_.size(); ++tried) {
    const size_t i = (cursor + tried) % states_.size();
    if (states_[i].needs()) {
      cursor = i + 1;
      return static_cast<int>(i);
    }
  }
  return -1;
}

void SlotWarmer::run(const std::stop_token& stop) {
  // The lowest share of the cores: the pools recycle while it lags, so a
  // slow warmer costs cache growth, never the steps' compute (measured:
  // docs/expert-cache.md). Only a hint; the thread works without it.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
  size_t cursor = 0;
  for (;;) {
    int index = -1;
    uint64_t bytes = 0;
    {
      std::lock_guard lock(mutex_);
      if (!stop.stop_requested()) index = next_pool(cursor);
      if (index >= 0) bytes = states_[static_cast<size_t>(index)].pool.slot_bytes;
    }
    if (index < 0) break;
    bool populated = false;
    HugePageBlock block;
    try {
      block = HugePageBlock(bytes, nullptr, "expert slots");
      // A huge page at a time, so that stopping waits for one at most.
      populated = true;
      for (size_t at = 0; populated && at < block.size(); at += kHugePageBytes) {
        if (stop.stop_requested()) break;
        populated = block.populate(at, kHugePageBytes);
      }
      if (stop.stop_requested()) break;
    } catch (const std::exception&) {
      // Out of address space: the pools map their own slots, as without a warmer.
    }
    if (!populated) break;  // the kernel cannot populate, or memory ran out
    std::lock_guard lock(mutex_);
    State& state = states_[static_cast<size_t>(index)];
    if (!state.needs()) continue;  // the pool mapped its own meanwhile
    warmed_bytes_ += block.size();
    state.ready.push_back(std::move(block));
  }
  std::lock_guard lock(mutex_);
  done_ = true;
  done_changed_.notify_all();
}

HugePageBlock SlotWarmer::take(int index) {
  std::lock_guard lock(mutex_);
  State& state = states_.at(static_cast<size_t>(index));
  if (state.ready.empty()) return {};
  ++state.handed;
  HugePageBlock block = std::move(state.ready.back());
  state.ready.pop_back();
  return block;
}

void SlotWarmer::mapped_own(int index) {
  std::lock_guard lock(mutex_);
  ++states_.at(static_cast<size_t>(index)).handed;
}

bool SlotWarmer::warming() const {
  std::lock_guard lock(mutex_);
  return !done_;
}

void SlotWarmer::wait_done() {
  std::unique_lock lock(mutex_);
  done_changed_.wait(lock, [&] { return done_; });
}

uint64_t SlotWarmer::warmed_bytes() const {
  std::lock_guard lock(mutex_);
  return warmed_bytes_;
}

}  // namespace glmrt
