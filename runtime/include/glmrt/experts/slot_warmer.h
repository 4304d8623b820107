// Expert slots faulted in ahead of use, off the steps' path. The first read
// into a fresh slot makes the kernel zero its huge pages inside that read's
// syscall, on an io thread (clear_page_erms under O_DIRECT's page pinning):
// a larger budget plans more slots, so more of that zeroing fell into the
// decode steps and took the cores from the computation (docs/expert-cache.md:
// cold decode was slower under a 9 GB limit than under 6 GB). The warmer maps
// and populates each pool's slots on a thread of its own from load on, one
// slot per pool in turn, and hands them over as the pools grow; a pool that
// finds none ready maps its own, as before. Blocks are charged to the budget
// when a pool takes them: the store checked at load that full pools fit.
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
  /// Starts warming `pools` (indices as given) at once.
  explicit SlotWarmer(std::vector<Pool> pools);
  SlotWarmer(const SlotWarmer&) = delete;
  SlotWarmer& operator=(const SlotWarmer&) = delete;
  /// Stops after the huge page being populated, if any.
  ~SlotWarmer();

  /// A populated, uncharged block for pool `index`, or an empty one when none
  /// is ready.
  HugePageBlock take(int index);
  /// Pool `index` mapped a slot of its own: the warmer makes one fewer.
  void mapped_own(int index);
  /// Still making slots (false once every pool is full or the kernel cannot populate).
  bool warming() const;
  /// Waits until every slot is warmed or handed over (or warming stopped
  /// because the kernel cannot populate): for tests.
  void wait_done();
  /// Bytes populated so far.
  uint64_t warmed_bytes() const;

 private:
  struct State {
    Pool pool;
    int handed = 0;  // taken, or mapped by the pool itself
    std::vector<HugePageBlock> ready;
    bool needs() const { return handed + static_cast<int>(ready.size()) < pool.capacity; }
  };
  void run(const std::stop_token& stop);
  int next_pool(size_t& cursor) const;  // under mutex_; -1 when every pool is full

  mutable std::mutex mutex_;
  std::condition_variable done_changed_;
  std::vector<State> states_;
  uint64_t warmed_bytes_ = 0;
  bool done_ = false;
  std::jthread thread_;  // last: it starts once the state above exists
};

}  // namespace glmrt
