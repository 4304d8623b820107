// Cache policies on hand-made traces whose hits were worked out by hand.
#include <glmrt/history/cache_replay.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

/// One layer, one expert per step: 0 1 2 0 1 3 0 1.
std::vector<CacheRequest> classic_sequence() {
  std::vector<CacheRequest> r;
  for (int32_t id : {0, 1, 2, 0, 1, 3, 0, 1}) r.push_back({0, {id}});
  return r;
}

TEST(CacheReplay, LruOnTheClassicSequence) {
  // Two slots, three experts in rotation: LRU always evicts the next one needed.
  const auto r = replay_lru(classic_sequence(), 1, 5, 2);
  EXPECT_EQ(r.hits, 0u);
  EXPECT_EQ(r.misses, 8u);
  // With room for all four, only first uses miss.
  EXPECT_EQ(replay_lru(classic_sequence(), 1, 5, 4).hits, 4u);
}

TEST(CacheReplay, BeladyIsTheOptimum) {
  // Keeps 0 and 1 and lets 2 and 3 (never needed again) pass through.
  const auto r = replay_belady(classic_sequence(), 1, 5, 2);
  EXPECT_EQ(r.hits, 4u);
  EXPECT_EQ(r.misses, 4u);
  EXPECT_EQ(replay_belady(classic_sequence(), 1, 5, 1).hits, 2u);  // 0 at i=3 and i=6 kept
  EXPECT_EQ(replay_belady(classic_sequence(), 1, 5, 0).hits, 0u);
}

TEST(CacheReplay, WarmBeladyStartsWithThePreloadedExperts) {
  // 0 and 1 are in before the first step: all six of their uses hit, 2 and
  // 3 pass through. Cold, their first uses missed (4 hits above).
  const auto warm = replay_belady(classic_sequence(), 1, 5, 2, {{0, 0}, {0, 1}});
  EXPECT_EQ(warm.hits, 6u);
  EXPECT_EQ(warm.misses, 2u);
  // Only as many as the slots are preloaded: {2} is dropped, so 2 misses
  // and 3 passes through: still 6.
  EXPECT_EQ(replay_belady(classic_sequence(), 1, 5, 2, {{0, 0}, {0, 1}, {0, 2}}).hits, 6u);
  // A preloaded expert never used again is the first to go: 3 in the only
  // slot makes way for 0 at once, as cold (2 hits).
  EXPECT_EQ(replay_belady(classic_sequence(), 1, 5, 1, {{0, 3}}).hits, 2u);
}

TEST(CacheReplay, BeladySharesTheSlotsBetweenLayers) {
  // Layer 0 reuses two experts, layer 1 never reuses one: with 2 slots in
  // all (1 per layer), the optimum gives both to layer 0.
  std::vector<CacheRequest> r;
  for (int k = 0; k < 3; ++k) {
    r.push_back({0, {0}});
    r.push_back({0, {1}});
    r.push_back({1, {int32_t(k)}});
  }
  EXPECT_EQ(replay_belady(r, 2, 4, 1).hits, 4u);
  EXPECT_EQ(replay_lru(r, 2, 4, 1).hits, 0u);
}

TEST(CacheReplay, LfuCountsUsesOverTheTrace) {
  // i2 evicts 0 (older tie), i3 evicts 1, i4 evicts 2, i5 evicts 0, i6
  // evicts 3, i7 hits 1.
  const auto r = replay_lfu(classic_sequence(), 1, 5, 2);
  EXPECT_EQ(r.hits, 1u);
  EXPECT_EQ(r.misses, 7u);
}

TEST(CacheReplay, PinnedPlusLruLearnsFromAnotherHistory) {
  ExpertUsage learned(1, 5);
  learned.add(0, 0, 10);  // expert 0 is the hot one
  learned.add(0, 3, 1);
  // Two slots: one pinned (expert 0), one LRU: 0 hits three times.
  const auto r = replay_pinned_lru(classic_sequence(), 1, 5, 2, learned, 0.5);
  EXPECT_EQ(r.hits, 3u);
  EXPECT_EQ(r.pinned_hits, 3u);
  EXPECT_EQ(r.misses, 5u);
  // Nothing learned: plain LRU.
  EXPECT_EQ(replay_pinned_lru(classic_sequence(), 1, 5, 2, ExpertUsage(1, 5), 0.5).hits, 0u);
}

TEST(CacheReplay, PinnedSetIsChosenOverAllLayers) {
  ExpertUsage learned(2, 4);
  learned.add(0, 1, 5);
  learned.add(1, 2, 9);
  learned.add(1, 3, 7);
  const auto pinned = choose_pinned(learned, 2);
  ASSERT_EQ(pinned.size(), 2u);
  EXPECT_EQ(pinned[0], (ExpertKey{1, 2}));
  EXPECT_EQ(pinned[1], (ExpertKey{1, 3}));
}

TEST(CacheReplay, StepsAreDistinctExpertsPerLayer) {
  RoutingTrace trace;
  trace.layers = 2;
  trace.experts = 4;
  trace.top_k = 2;
  trace.steps.push_back({1, 2, {0, 1, 1, 2}});  // two positions, expert 1 twice
  trace.steps.push_back({0, 1, {3, 0}});
  const auto requests = cache_requests(trace);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].ids, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(requests[1].ids, (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(trace.usage().count(1, 1), 2u);
  // Layers have caches of their own: layer 0's expert 0 is a miss.
  const auto r = replay_lru(requests, 2, 4, 4);
  EXPECT_EQ(r.misses, 5u);
}

}  // namespace
}  // namespace glmrt
