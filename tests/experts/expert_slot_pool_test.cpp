// The slot pool of one MoE layer: slots allocated on first claim up to the
// capacity and charged to the budget, then recycled least recently used
// first, never a pinned one or one the caller protects; lookups by expert id.
#include <glmrt/base/error.h>
#include <glmrt/experts/expert_slot_pool.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

constexpr uint64_t kSlotBytes = 3 * 1024 * 1024 + 100;  // not a page multiple
const auto kAny = [](int) { return true; };

TEST(ExpertSlotPool, AllocatesOnFirstUseUpToCapacityAndChargesTheBudget) {
  MemoryBudget budget;
  ExpertSlotPool pool(16, 3, kSlotBytes, &budget);
  EXPECT_EQ(pool.allocated(), 0);
  EXPECT_EQ(budget.used(), 0u);
  const int a = pool.claim(5, kAny);
  EXPECT_EQ(pool.allocated(), 1);
  const uint64_t per_slot = (kSlotBytes + 4095) / 4096 * 4096;
  EXPECT_EQ(budget.by_category().at("expert slots"), per_slot);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pool.memory(a)) % kHugePageBytes, 0u);
  pool.claim(6, kAny);
  pool.claim(7, kAny);
  EXPECT_EQ(pool.allocated(), 3);
  for (int id = 8; id < 16; ++id) pool.claim(id, kAny);  // recycled, never more
  EXPECT_EQ(pool.allocated(), 3);
  EXPECT_EQ(budget.by_category().at("expert slots"), 3 * per_slot);
}

TEST(ExpertSlotPool, RecyclesTheLeastRecentlyUsed) {
  ExpertSlotPool pool(16, 3, 4096, nullptr);
  const int a = pool.claim(1, kAny), b = pool.claim(2, kAny), c = pool.claim(3, kAny);
  pool.touch(a);                      // order now: a, c, b (b coldest)
  EXPECT_EQ(pool.claim(4, kAny), b);  // 2 evicted
  EXPECT_EQ(pool.slot_of(2), -1);
  EXPECT_EQ(pool.slot_of(4), b);
  EXPECT_EQ(pool.expert_in(b), 4);
  EXPECT_EQ(pool.claim(5, kAny), c);  // then 3
  EXPECT_EQ(pool.slot_of(1), a);
}

TEST(ExpertSlotPool, NeverTakesAPinnedOrProtectedSlot) {
  ExpertSlotPool pool(16, 2, 4096, nullptr);
  const int a = pool.claim(1, kAny), b = pool.claim(2, kAny);
  pool.pin(a);  // a is coldest but pinned
  EXPECT_EQ(pool.claim(3, kAny), b);
  EXPECT_EQ(pool.claim(4, [&](int s) { return s != b; }), -1);  // b protected, a pinned
  EXPECT_EQ(pool.slot_of(4), -1);
  pool.unpin(a);
  EXPECT_EQ(pool.claim(4, [&](int s) { return s != b; }), a);
}

TEST(ExpertSlotPool, AForgottenSlotIsTakenFirst) {
  ExpertSlotPool pool(16, 3, 4096, nullptr);
  const int a = pool.claim(1, kAny), b = pool.claim(2, kAny);
  pool.claim(3, kAny);
  pool.forget(b);
  EXPECT_EQ(pool.slot_of(2), -1);
  EXPECT_EQ(pool.expert_in(b), -1);
  EXPECT_EQ(pool.claim(9, kAny), b);
  EXPECT_EQ(pool.slot_of(1), a);
}

TEST(ExpertSlotPool, TheBudgetCanRefuseASlot) {
  MemoryBudget budget(kSlotBytes + 8192);
  ExpertSlotPool pool(4, 2, kSlotBytes, &budget);
  pool.claim(0, kAny);
  EXPECT_THROW(pool.claim(1, kAny), Error);
  EXPECT_EQ(pool.allocated(), 1);
  EXPECT_EQ(pool.slot_of(1), -1);
  EXPECT_THROW(ExpertSlotPool(4, 0, 4096, nullptr), Error);
}

}  // namespace
}  // namespace glmrt
