// The shards: contiguous ids without a history, even expected load with one,
// every expert owned exactly once by a holder, identical for identical input.
#include <glmrt/base/error.h>
#include <glmrt/distributed/expert_assignment.h>

#include <gtest/gtest.h>

#include <numeric>

namespace glmrt {
namespace {

TEST(ExpertAssignment, ByIdGivesContiguousRangesToTheHolders) {
  const std::vector<bool> rows{false, true, true};
  const std::vector<int> holders{0, 1, 2};
  const auto a = ExpertAssignment::by_id(rows, 16, holders, 3);
  EXPECT_EQ(a.owner(0, 3), -1);  // a dense layer has no experts
  EXPECT_EQ(a.owner(1, 0), 0);
  EXPECT_EQ(a.owner(1, 5), 0);
  EXPECT_EQ(a.owner(1, 6), 1);
  EXPECT_EQ(a.owner(2, 15), 2);
  EXPECT_EQ(a.experts_owned(0) + a.experts_owned(1) + a.experts_owned(2), 32);
  EXPECT_FALSE(a.from_usage());
}

TEST(ExpertAssignment, RankZeroCanHoldNone) {
  const std::vector<int> holders{1, 2};
  const auto a = ExpertAssignment::by_id({true}, 8, holders, 3);
  EXPECT_EQ(a.experts_owned(0), 0);
  EXPECT_EQ(a.experts_owned(1), 4);
  EXPECT_EQ(a.experts_owned(2), 4);
}

TEST(ExpertAssignment, UsageSpreadsTheHotExpertsEvenly) {
  ExpertUsage usage(2, 8);
  // Layer 1: experts 0..3 hot (100, 90, 80, 70), the rest cold.
  const uint64_t counts[8] = {100, 90, 80, 70, 1, 1, 1, 0};
  for (int e = 0; e < 8; ++e) usage.add(1, e, counts[e]);
  const std::vector<int> holders{0, 1};
  const auto a = ExpertAssignment::by_usage(usage, {false, true}, holders, 2);
  EXPECT_TRUE(a.from_usage());
  // Greedy by load: 100 -> 0, 90 -> 1, 80 -> 1, 70 -> 0: 170 each.
  EXPECT_EQ(a.owner(1, 0), 0);
  EXPECT_EQ(a.owner(1, 1), 1);
  EXPECT_EQ(a.owner(1, 2), 1);
  EXPECT_EQ(a.owner(1, 3), 0);
  EXPECT_EQ(a.experts_owned(0), 4);
  EXPECT_EQ(a.experts_owned(1), 4);
  EXPECT_NEAR(a.expected_share(0), a.expected_share(1), 0.01);
  // The same input gives the same assignment (every rank checks the hash).
  EXPECT_EQ(a.fingerprint(),
            ExpertAssignment::by_usage(usage, {false, true}, holders, 2).fingerprint());
  EXPECT_NE(a.fingerprint(), ExpertAssignment::by_id({false, true}, 8, holders, 2).fingerprint());
}

TEST(ExpertAssignment, EmptyUsageFallsBackToIds) {
  const std::vector<int> holders{0, 1};
  const auto a = ExpertAssignment::by_usage(ExpertUsage(1, 4), {true}, holders, 2);
  EXPECT_FALSE(a.from_usage());
  EXPECT_EQ(a.owner(0, 0), 0);
  EXPECT_EQ(a.owner(0, 3), 1);
}

TEST(ExpertAssignment, ReceivedOwnersAreChecked) {
  EXPECT_THROW(ExpertAssignment::from_owners(1, 2, 2, {0, 2}), Error);  // 2 is not a rank
  EXPECT_THROW(ExpertAssignment::from_owners(1, 2, 2, {0}), Error);     // too few
  const auto a = ExpertAssignment::from_owners(1, 2, 2, {1, 0});
  EXPECT_EQ(a.owner(0, 0), 1);
  EXPECT_NE(a.describe().find("rank 1: 1 experts"), std::string::npos) << a.describe();
}

}  // namespace
}  // namespace glmrt
