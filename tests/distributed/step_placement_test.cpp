// Placing a step's experts by load (distributed.placement: least_loaded):
// an expert some rank holds runs there, misses spread evenly over the
// ranks' drives, what a rank has queued counts, and the same input gives
// the same placement.
#include <glmrt/base/error.h>
#include <glmrt/distributed/step_placement.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace glmrt {
namespace {

// 4 ranks, 16 experts, contiguous shards of 4; `held` is (rank, expert) pairs.
struct World {
  std::vector<int> holders{0, 1, 2, 3};
  std::set<std::pair<int, int32_t>> held;
  PlacementView view() const {
    return {holders,
            [this](int r, int32_t e) {
              return held.count({r, e}) > 0;
            },
            [](int32_t e) { return e / 4; }};
  }
};

TEST(StepPlacement, MissesSpreadEvenlyWhereShardsWouldPileUp) {
  World w;
  // Experts 0..7: shards would give ranks 0 and 1 four reads each, 2 and 3 none.
  const std::vector<int32_t> ids{0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<double> queued(4, 0.0);
  const auto placed = place_experts(ids, w.view(), queued);
  std::vector<int> per_rank(4, 0);
  for (int r : placed) ++per_rank[r];
  EXPECT_EQ(per_rank, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(queued, (std::vector<double>{2, 2, 2, 2}));
  // Ties go to the owner first: each rank gets its own shard's expert once.
  EXPECT_EQ(placed[0], 0);
  EXPECT_EQ(placed[4], 1);
}

TEST(StepPlacement, AnExpertInMemoryRunsWhereItIsAndCostsNoRead) {
  World w;
  w.held = {{3, 0}, {2, 5}, {1, 5}};
  std::vector<double> queued{0, 0, 3, 0};
  const std::vector<int32_t> ids{0, 5, 9};
  const auto placed = place_experts(ids, w.view(), queued);
  EXPECT_EQ(placed[0], 3);  // only rank 3 holds it, though rank 0 owns it
  EXPECT_EQ(placed[1], 1);  // its owner holds it
  EXPECT_EQ(queued[3], 0);  // hits add nothing to a drive
  EXPECT_EQ(placed[2], 0);  // the miss: the least queued (rank 2 owns 9 but has 3 queued)
  EXPECT_EQ(queued[0], 1);
}

TEST(StepPlacement, QueuedReadsAndTheNextLayerQueueBehind) {
  World w;
  std::vector<double> queued{2, 0, 0, 1};
  const auto step = place_experts(std::vector<int32_t>{8, 12}, w.view(), queued);
  EXPECT_EQ(step, (std::vector<int>{2, 1}));  // ranks with nothing queued, owner first
  // The read-ahead of the next layer continues from those loads.
  const auto ahead = place_experts(std::vector<int32_t>{1, 2, 3}, w.view(), queued);
  EXPECT_EQ(ahead, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(queued, (std::vector<double>{2, 2, 2, 2}));
}

TEST(StepPlacement, OnlyHoldersRunExpertsAndTheSameInputGivesTheSamePlacement) {
  World w;
  w.holders = {1, 2};  // distributed.rank0_experts: false
  const std::vector<int32_t> ids{0, 1, 2, 3, 13};
  std::vector<double> a(4, 0.0), b(4, 0.0);
  const auto first = place_experts(ids, w.view(), a);
  EXPECT_TRUE(std::all_of(first.begin(), first.end(), [](int r) { return r == 1 || r == 2; }));
  EXPECT_EQ(first, place_experts(ids, w.view(), b));
  w.holders = {};
  EXPECT_THROW(place_experts(ids, w.view(), a), Error);
}

}  // namespace
}  // namespace glmrt
