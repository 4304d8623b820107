// Expert slots faulted in ahead of use, off the steps' path. The first read
// into a fresh slot makes the kernel zero its huge pages inside that read's
// syscall, on an io thread (clear_page_erms under O_DIRECT's page pinning):
// a larger budget plans more slots, so more of that zeroing fell into the
// decode steps (docs/expert-cache.md: cold decode was slower under a 9 GB
// limit than under 6 GB). The warmer maps and populates each pool's slots on
// threads of its own, one slot per pool in turn, and hands them over as the
// pools grow; a pool that finds none ready maps its own, as before. The
// engine waits for it at load (zeroing beside the steps, even at the lowest
// priority, slowed them by a fifth: measured), so the slots are charged to
// the budget as they are made, where the memory is: the store checked at
// load that full pools fit.
#pragma once

#include <glmrt/base/huge_pages.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace glmrt {

class SlotWarmer {
 public:
  struct Pool {
    int capacity = 0;         // slots the pool can hold
    uint64_t slot_bytes = 0;  // each
  };
  /// Starts warming `pools` (indices as given) at once, on `threads` threads.
  /// With a `budget` each block is charged to it ("expert slots") when made;
  /// without one, a pool charges a block when it takes it.
  explicit SlotWarmer(std::vector<Pool> pools, int threads = 1, MemoryBudget* budget = nullptr);
  SlotWarmer(const SlotWarmer&) = delete;
  SlotWarmer& operator=(const SlotWarmer&) = delete;
  /// Stops after the huge pages being populated, if any.
  ~SlotWarmer();

  /// A populated, uncharged block for pool `index`, or an empty one when none
  /// is ready. With `reserve_if_none`, an empty answer also counts the slot as
  /// the pool's own to map, in the same step: a warmer that checked later
  /// would make a block nobody takes.
  HugePageBlock take(int index, bool reserve_if_none = false);
  /// The pool could not map the slot it reserved: the warmer may make it.
  void cancel_reservation(int index);
  /// Still making slots (false once every pool is full or the kernel cannot populate).
  bool warming() const;
  /// Waits until every slot is warmed or handed over (or warming stopped
  /// because the kernel cannot populate).
  void wait_done();
  /// Bytes populated so far.
  uint64_t warmed_bytes() const;

 private:
  struct State {
    Pool pool;
    int handed = 0;     // taken, or mapped by the pool itself
    int in_making = 0;  // being populated by a thread now
    std::vector<HugePageBlock> ready;
    bool needs() const {
      return handed + in_making + static_cast<int>(ready.size()) < pool.capacity;
    }
  };
  void run(const std::stop_token& stop);
  int next_pool();  // under mutex_; -1 when every pool is full

  mutable std::mutex mutex_;
  std::condition_variable done_changed_;
  std::vector<State> states_;
  MemoryBudget* budget_ = nullptr;
  uint64_t warmed_bytes_ = 0;
  size_t cursor_ = 0;                  // the pool to try first: one slot per pool in turn
  int running_ = 0;                    // threads still making slots
  bool failed_ = false;                // the kernel cannot populate, or memory ran out
  std::vector<std::jthread> threads_;  // last: they start once the state above exists
};

}  // namespace glmrt
