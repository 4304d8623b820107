// Expert slots faulted in ahead of use: the warmer populates each pool's
// slots on its own thread and a pool takes them as it grows, charging the
// budget then; a pool that finds none ready maps its own and counts its bytes
// as fresh (the first read into them pays the kernel's zeroing).
#include <glmrt/base/huge_pages.h>
#include <glmrt/experts/expert_slot_pool.h>
#include <glmrt/experts/slot_warmer.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace glmrt {
namespace {

constexpr uint64_t kWarmSlotBytes = 3 * 1024 * 1024 + 100;  // not a page multiple
constexpr uint64_t kWarmPerSlot = (kWarmSlotBytes + 4095) / 4096 * 4096;
const auto kAnySlot = [](int) { return true; };

TEST(HugePageBlock, PopulateKeepsTheBytesAlreadyThere) {
  HugePageBlock block(kWarmSlotBytes, nullptr, "test");
  std::memset(block.data(), 0x5a, 4096);  // the first page only: the rest stays untouched
  if (!block.populate()) GTEST_SKIP() << "this kernel cannot populate (MADV_POPULATE_WRITE)";
  EXPECT_EQ(static_cast<unsigned char>(block.data()[0]), 0x5a);
  EXPECT_EQ(static_cast<unsigned char>(block.data()[4095]), 0x5a);
  EXPECT_EQ(static_cast<unsigned char>(block.data()[4096]), 0);
}

TEST(HugePageBlock, AnUnchargedBlockIsChargedOnce) {
  MemoryBudget budget;
  HugePageBlock block(kWarmSlotBytes, nullptr, "expert slots");
  EXPECT_EQ(budget.used(), 0u);
  block.charge_to(&budget, "expert slots");
  EXPECT_EQ(budget.by_category().at("expert slots"), kWarmPerSlot);
  EXPECT_THROW(block.charge_to(&budget, "expert slots"), Error);
}

TEST(SlotWarmer, PoolsTakeWarmedSlotsAndChargeThemWhenTaken) {
  MemoryBudget budget;
  ExpertSlotPool a(16, 3, kWarmSlotBytes, &budget), b(16, 2, kWarmSlotBytes, &budget);
  SlotWarmer warmer({{.capacity = 3, .slot_bytes = kWarmSlotBytes},
                     {.capacity = 2, .slot_bytes = kWarmSlotBytes}});
  a.take_slots_from(&warmer, 0);
  b.take_slots_from(&warmer, 1);
  warmer.wait_done();
  if (warmer.warmed_bytes() == 0) GTEST_SKIP() << "this kernel cannot populate";
  EXPECT_EQ(warmer.warmed_bytes(), 5 * kWarmPerSlot);  // every slot of both pools, none more
  EXPECT_EQ(budget.used(), 0u);                        // nothing is charged before a pool takes it
  a.claim(1, kAnySlot);
  EXPECT_EQ(budget.by_category().at("expert slots"), kWarmPerSlot);
  for (int id = 2; id < 10; ++id) a.claim(id, kAnySlot);
  for (int id = 0; id < 10; ++id) b.claim(id, kAnySlot);
  EXPECT_EQ(a.allocated(), 3);
  EXPECT_EQ(b.allocated(), 2);
  EXPECT_EQ(budget.by_category().at("expert slots"), 5 * kWarmPerSlot);
  EXPECT_EQ(a.fresh_bytes() + b.fresh_bytes(), 0u);  // no read had to fault a slot in
}

TEST(SlotWarmer, SeveralThreadsMakeEachSlotOnce) {
  SlotWarmer warmer({{.capacity = 5, .slot_bytes = kWarmSlotBytes},
                     {.capacity = 1, .slot_bytes = kWarmSlotBytes},
                     {.capacity = 3, .slot_bytes = kWarmSlotBytes}},
                    3);
  EXPECT_TRUE(warmer.warming() || warmer.warmed_bytes() == 9 * kWarmPerSlot ||
              warmer.warmed_bytes() == 0);
  warmer.wait_done();
  EXPECT_FALSE(warmer.warming());
  if (warmer.warmed_bytes() == 0) GTEST_SKIP() << "this kernel cannot populate";
  EXPECT_EQ(warmer.warmed_bytes(), 9 * kWarmPerSlot);
  int taken = 0;
  for (int pool = 0; pool < 3; ++pool)
    while (warmer.take(pool).data()) ++taken;
  EXPECT_EQ(taken, 9);
}

TEST(SlotWarmer, WithABudgetSlotsAreChargedWhenMadeAndOnceOnly) {
  MemoryBudget budget;
  ExpertSlotPool pool(16, 2, kWarmSlotBytes, &budget);
  SlotWarmer warmer({{.capacity = 2, .slot_bytes = kWarmSlotBytes}}, 2, &budget);
  warmer.wait_done();
  if (warmer.warmed_bytes() == 0) GTEST_SKIP() << "this kernel cannot populate";
  EXPECT_EQ(budget.by_category().at("expert slots"), 2 * kWarmPerSlot);
  pool.take_slots_from(&warmer, 0);
  for (int id = 0; id < 5; ++id) pool.claim(id, kAnySlot);
  EXPECT_EQ(pool.allocated(), 2);
  EXPECT_EQ(budget.by_category().at("expert slots"), 2 * kWarmPerSlot);
}

TEST(SlotWarmer, APoolThatFindsNoneReadyMapsItsOwnAndTheWarmerMakesOneFewer) {
  MemoryBudget budget;
  ExpertSlotPool pool(16, 4, kWarmSlotBytes, &budget);
  SlotWarmer warmer({{.capacity = 4, .slot_bytes = kWarmSlotBytes}});
  pool.take_slots_from(&warmer, 0);
  for (int id = 0; id < 4; ++id) pool.claim(id, kAnySlot);  // racing the warmer
  warmer.wait_done();
  // Each slot is either warmed and taken or mapped by the pool: never both.
  EXPECT_EQ(warmer.warmed_bytes() + pool.fresh_bytes(), 4 * kWarmPerSlot);
  EXPECT_EQ(budget.by_category().at("expert slots"), 4 * kWarmPerSlot);
}

TEST(SlotWarmer, AWarmOnlyClaimNeverMapsFreshMemoryWhileWarming) {
  // The warmer is busy with a large first pool: whatever it has ready for the
  // second when asked, a warm_only claim there takes it or recycles.
  SlotWarmer warmer({{.capacity = 64, .slot_bytes = kWarmSlotBytes},
                     {.capacity = 4, .slot_bytes = kWarmSlotBytes}});
  ExpertSlotPool pool(16, 4, kWarmSlotBytes, nullptr);
  pool.take_slots_from(&warmer, 1);
  using Growth = ExpertSlotPool::Growth;
  for (int id = 0; id < 16 && warmer.warming(); ++id) {
    const int slot = pool.claim(id, kAnySlot, Growth::warm_only);
    EXPECT_TRUE(slot >= 0 || pool.allocated() == 0) << id;  // -1 only with nothing to recycle
  }
  EXPECT_EQ(pool.fresh_bytes(), 0u);
}

TEST(SlotWarmer, OnceWarmingIsOverAWarmOnlyClaimGrowsAsAnyOther) {
  SlotWarmer warmer({{.capacity = 1, .slot_bytes = kWarmSlotBytes}});
  warmer.wait_done();
  ExpertSlotPool pool(16, 3, kWarmSlotBytes, nullptr);
  pool.take_slots_from(&warmer, 0);
  for (int id = 0; id < 3; ++id)
    EXPECT_EQ(pool.claim(id, kAnySlot, ExpertSlotPool::Growth::warm_only), id);
  EXPECT_EQ(pool.allocated(), 3);
  // One slot came warmed (where the kernel can populate), the rest were mapped fresh.
  EXPECT_EQ(pool.fresh_bytes(), (warmer.warmed_bytes() ? 2 : 3) * kWarmPerSlot);
}

TEST(SlotWarmer, WithoutOneEverySlotIsFresh) {
  ExpertSlotPool pool(16, 3, kWarmSlotBytes, nullptr);
  for (int id = 0; id < 5; ++id) pool.claim(id, kAnySlot);
  EXPECT_EQ(pool.fresh_bytes(), 3 * kWarmPerSlot);
}

TEST(SlotWarmer, EveryThreadStartsEvenWhenTheFirstFindsNothingToDo) {
  // Pools already full: each thread leaves as soon as it starts. A warmer that
  // started fewer threads than it waits for never finishes (CI hung in
  // MemoryPlan.BudgetHoldsWhatTheRunAllocates, whose budget refuses the slots).
  // warming() is polled against a deadline so that the fault fails the test
  // instead of hanging it.
  for (int round = 0; round < 50; ++round) {
    SlotWarmer warmer({{.capacity = 0, .slot_bytes = kWarmSlotBytes}}, 8);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (warmer.warming() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_FALSE(warmer.warming()) << "round " << round;
  }
}

TEST(SlotWarmer, StopsPromptlyWhenDestroyedEarly) {
  // 64 slots of 3 MiB: destroyed at once, it finishes at most the slot in hand.
  SlotWarmer warmer({{.capacity = 64, .slot_bytes = kWarmSlotBytes}});
}

}  // namespace
}  // namespace glmrt
