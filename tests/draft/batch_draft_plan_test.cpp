// The batch's draft plan on synthetic step measurements: a draft row pays
// when its acceptance per second of extra step time beats the batch's own
// tokens per second, so the same sequence drafts alone where it would not in
// a busy batch, and reads that a row brings make rows dearer.
#include <glmrt/draft/batch_draft_plan.h>

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace glmrt {
namespace {

BatchDraftCandidate accepting(double rate, int cap = 4) {
  BatchDraftCandidate c;
  c.acceptance.assign(4, rate);
  c.cap = cap;
  return c;
}

/// Steps of 1 and 8 rows costing `base` + `per_row` x rows of compute.
void measure(BatchDraftPlan& plan, double base, double per_row, int64_t experts_per_row = 0,
             double miss_rate = 0, double wait_per_miss = 0) {
  for (int i = 0; i < 6; ++i)
    for (int64_t rows : {1, 8}) {
      const int64_t experts = experts_per_row * rows;
      const auto misses = static_cast<int64_t>(miss_rate * static_cast<double>(experts));
      const double reads = static_cast<double>(misses) * wait_per_miss;
      plan.record(
          {rows, 0, base + per_row * static_cast<double>(rows) + reads, reads, experts, misses});
    }
}

int total(const std::vector<int>& k) {
  return std::accumulate(k.begin(), k.end(), 0);
}

TEST(BatchDraftPlan, FitsTheStepsCostOnItsRows) {
  BatchDraftPlan plan(8);
  measure(plan, 1.0, 0.15);
  EXPECT_NEAR(plan.cost().compute_base, 1.0, 1e-6);
  EXPECT_NEAR(plan.cost().compute_per_row, 0.15, 1e-6);
  // Prompt steps are not decode rows: they leave the fit alone.
  plan.record({512, 512, 40.0, 0, 0, 0});
  EXPECT_NEAR(plan.cost().compute_per_row, 0.15, 1e-6);
}

TEST(BatchDraftPlan, ASequenceDraftsAloneWhereABusyBatchWouldNot) {
  BatchDraftPlan plan(8);
  measure(plan, 1.0, 0.15);
  // Alone: 0.4 tokens for 0.15 s beats ~0.87 tokens/s.
  const std::vector<BatchDraftCandidate> one = {accepting(0.4)};
  EXPECT_GT(total(plan.plan(one, 0, 0)), 0);
  // Beside 7 decoding sequences the step makes 8 tokens in 2.2 s: a row
  // adding 0.4 tokens for 0.15 s no longer pays.
  EXPECT_EQ(total(plan.plan(one, 7, 7)), 0);
  // A sure drafter still pays there.
  EXPECT_GT(total(plan.plan(std::vector{accepting(0.95)}, 7, 7)), 0);
}

TEST(BatchDraftPlan, RowsGoToTheSequencesMostLikelyAccepted) {
  BatchDraftPlan plan(8);
  measure(plan, 1.0, 0.05);
  const std::vector<BatchDraftCandidate> pair = {accepting(0.05), accepting(0.9)};
  const std::vector<int> k = plan.plan(pair, 2, 2);
  EXPECT_EQ(k[0], 0);
  EXPECT_EQ(k[1], 4);
}

TEST(BatchDraftPlan, ExpertsARowReadsMakeItDearer) {
  BatchDraftPlan cached(8), streamed(8);
  measure(cached, 1.0, 0.05, 6, 0.0, 0.0);
  measure(streamed, 1.0, 0.05, 6, 0.5, 0.1);  // a row: 3 misses waiting 0.3 s
  const std::vector<BatchDraftCandidate> one = {accepting(0.6)};
  EXPECT_GT(total(cached.plan(one, 3, 3)), 0);
  EXPECT_EQ(total(streamed.plan(one, 3, 3)), 0);
}

TEST(BatchDraftPlan, FixedPoliciesAlwaysDraftTheirCapAndMinimumLengthsHold) {
  BatchDraftPlan plan(8);
  BatchDraftCandidate fixed = accepting(0.0, 3);
  fixed.adaptive = false;
  // Before anything was measured: fixed ones draft, adaptive ones wait.
  EXPECT_EQ(plan.plan(std::vector{fixed, accepting(0.9)}, 0, 0), (std::vector<int>{3, 0}));
  measure(plan, 1.0, 0.01);
  BatchDraftCandidate two_at_least = accepting(0.9, 4);
  two_at_least.min_tokens = 2;
  const std::vector<int> k = plan.plan(std::vector{two_at_least}, 0, 0);
  EXPECT_TRUE(k[0] == 0 || k[0] >= 2) << k[0];
  EXPECT_GT(k[0], 0);
}

TEST(BatchDraftPlan, ProbesNowAndThenWhileDraftingDoesNotPay) {
  BatchDraftPlan plan(8);
  measure(plan, 1.0, 0.5);  // a row costs half a step: rarely worth it
  const std::vector<BatchDraftCandidate> pair = {accepting(0.2), accepting(0.2)};
  int probes = 0, steps = 0;
  std::vector<int> probed(2, 0);
  for (; steps < 400; ++steps) {
    const std::vector<int> k = plan.plan(pair, 0, 0);
    for (size_t i = 0; i < k.size(); ++i) probed[i] += k[i] > 0;
    probes += total(k) > 0;
  }
  EXPECT_EQ(probes, plan.probes());
  EXPECT_GT(probes, 0);
  EXPECT_LT(probes, steps / 20);  // within the probe budget
  EXPECT_GT(probed[0], 0);        // in turn
  EXPECT_GT(probed[1], 0);
}

}  // namespace
}  // namespace glmrt
