// The expert store's pinned set and LRU counters against a sequence worked
// out by hand; pinning never changes the logits.
#include "engine_fixture.h"

#include <glmrt/history/pinned_choice.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

std::unique_ptr<Engine> tiny_engine_with_cache(int cache) {
  Profile profile = test_support::reference_profile();
  profile.history = false;  // nothing pinned by itself
  profile.expert_cache_per_layer = cache;
  profile.prefetch_slots = 0;  // the pool is the LRU alone
  return test_support::open_tiny_engine(profile);
}

TEST(PinnedStore, CountersFollowAHandComputedSequence) {
  auto engine = tiny_engine_with_cache(2);
  ExpertStore& store = engine->experts();
  const ExpertKey pin[] = {{1, 0}};
  const PinnedSummary& pinned = store.pin(pin, false);
  EXPECT_EQ(pinned.experts, 1u);
  EXPECT_GT(pinned.bytes_read, 0u);
  EXPECT_EQ(store.stats().bytes_read, 0u);  // pinning is not a step's read
  auto acquire = [&](int layer, std::vector<int32_t> ids) { store.acquire(layer, ids); };
  acquire(1, {0, 1});  // 0 pinned; 1 miss            LRU [1]
  acquire(1, {1, 2});  // 1 hit; 2 miss               LRU [2 1]
  acquire(1, {3});     // 3 miss, 1 evicted           LRU [3 2]
  acquire(1, {0, 1});  // 0 pinned; 1 miss, 2 evicted LRU [1 3]
  acquire(2, {0});     // layer 2 pins nothing: miss
  const ExpertStoreStats& s = store.stats();
  EXPECT_EQ(s.pinned_hits, 2u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 5u);
  EXPECT_GE(s.bytes_read, 4 * pinned.bytes_read);
  EXPECT_LT(s.bytes_read, 10 * pinned.bytes_read);
  EXPECT_DOUBLE_EQ(s.hit_rate(), 3.0 / 8.0);
}

TEST(PinnedStore, ChoiceTakesTheMostUsedThatFit) {
  ExpertUsage usage(3, 4);
  usage.add(0, 1, 100);  // a dense row: never pinned
  usage.add(1, 2, 50);
  usage.add(2, 3, 40);
  usage.add(1, 0, 5);
  const std::vector<bool> rows{false, true, true};
  const auto two = choose_pinned_experts(usage, 2 * 1000 + 999, 1000, rows);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], (ExpertKey{1, 2}));
  EXPECT_EQ(two[1], (ExpertKey{2, 3}));
  EXPECT_TRUE(choose_pinned_experts(usage, 999, 1000, rows).empty());
}

TEST(PinnedStore, PinningNeverChangesTheLogits) {
  auto plain = tiny_engine_with_cache(1);
  auto pinned = tiny_engine_with_cache(1);
  std::vector<ExpertKey> all;
  for (int layer : {1, 2, 3})
    for (int e = 0; e < 16; e += 3) all.push_back({layer, e});
  pinned->experts().pin(all, true);  // mlock may be refused: still correct
  const int32_t prompt[] = {5, 17, 99, 3, 250, 7};
  KvCache a = plain->new_cache(), b = pinned->new_cache();
  const auto ha = plain->model().forward(a, prompt);
  const auto hb = pinned->model().forward(b, prompt);
  EXPECT_EQ(ha, hb);
  EXPECT_GT(pinned->experts().stats().pinned_hits, 0u);
}

// With every routed expert pinned nothing is read ahead into slots and no
// prediction is counted for the pool (it used to read pinned experts ahead
// and report a read-ahead accuracy of 0%); with some pinned, the others are.
// Pinned experts are never read ahead, but the prediction is measured
// against them too: with every expert pinned the accuracy is still reported.
TEST(PinnedStore, PinnedExpertsAreNotReadAheadButThePredictionIsMeasured) {
  for (const bool every_expert : {true, false}) {
    SCOPED_TRACE(every_expert ? "every expert pinned" : "every third expert pinned");
    Profile profile = test_support::reference_profile();
    profile.history = false;
    profile.prefetch_slots = 4;
    auto engine = test_support::open_tiny_engine(profile);
    ExpertStore& store = engine->experts();
    const std::vector<bool> rows = store.expert_rows();
    std::vector<ExpertKey> keys;
    for (size_t layer = 0; layer < rows.size(); ++layer)
      if (rows[layer])
        for (int e = 0; e < engine->model().config().n_routed_experts; e += every_expert ? 1 : 3)
          keys.push_back({static_cast<int>(layer), e});
    store.pin(keys, false);
    KvCache cache = engine->new_cache();
    const int32_t prompt[] = {5, 17, 99, 3, 250, 7};
    engine->model().forward(cache, prompt);
    for (int32_t token : {11, 12, 13}) engine->model().forward(cache, std::span(&token, 1));
    const ExpertStoreStats& s = store.stats();
    EXPECT_GT(s.pinned_hits, 0u);
    if (every_expert) {
      EXPECT_EQ(s.hits + s.misses, 0u);
      EXPECT_GT(s.predicted, 0u);
      EXPECT_GT(s.predicted_used, 0u);
      EXPECT_EQ(s.prefetch_reads, 0u);
      EXPECT_EQ(s.bytes_read, 0u);
    } else {
      EXPECT_GT(s.misses, 0u);
      EXPECT_GT(s.predicted, 0u);
    }
  }
}

}  // namespace
}  // namespace glmrt
