// verify_draft keeps the output law exactly p, whatever q the draft came from
// (Monte Carlo with fixed seeds, chi-square), accepts at the rate
// sum min(p, q), and never draws when the outcome is certain (greedy).
#include <glmrt/draft/rejection_sampling.h>

#include <gtest/gtest.h>

#include <random>

#include "chi_square.h"

namespace glmrt {
namespace {

struct Trial {
  std::vector<int64_t> counts;  // of the token that came out, by id
  int64_t accepted = 0;
};

/// Draws the draft from q and verifies it against p, `n` times.
Trial run(const std::vector<TokenProbability>& p, const std::vector<int32_t>& q_ids,
          const std::vector<float>& q_probs, int32_t vocab, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto uniform = [&] { return u(rng); };
  Trial t;
  t.counts.assign(vocab, 0);
  for (int i = 0; i < n; ++i) {
    double x = uniform();
    size_t pick = 0;
    while (pick + 1 < q_probs.size() && x >= q_probs[pick]) x -= q_probs[pick++];
    const DraftDistribution q{q_ids[pick], q_ids, q_probs};
    const DraftVerdict v = verify_draft(p, q, uniform);
    ++t.counts[v.token];
    t.accepted += v.accepted;
  }
  return t;
}

std::vector<double> dense(const std::vector<TokenProbability>& p, int32_t vocab) {
  std::vector<double> d(vocab, 0.0);
  for (const auto& e : p) d[e.token] = e.probability;
  return d;
}

const std::function<double()> kNoDraws = [] {
  ADD_FAILURE() << "a uniform was drawn for a certain outcome";
  return 0.5;
};

TEST(RejectionSampling, GreedyAcceptsExactlyTheArgmaxWithoutDrawing) {
  const std::vector<TokenProbability> p = {{7, 1.0}};
  const std::vector<int32_t> ids = {3, 7, 9};
  const std::vector<float> probs = {0.5f, 0.3f, 0.2f};
  for (int32_t draft : {3, 7, 9}) {
    const DraftVerdict v = verify_draft(p, {draft, ids, probs}, kNoDraws);
    EXPECT_EQ(v.accepted, draft == 7);
    EXPECT_EQ(v.token, 7);
  }
  const DraftVerdict one_hot = verify_draft(p, {4, {}, {}}, kNoDraws);
  EXPECT_FALSE(one_hot.accepted);
  EXPECT_EQ(one_hot.token, 7);
}

TEST(RejectionSampling, QEqualToPAcceptsEveryDraftWithoutDrawing) {
  // Probabilities a float holds exactly: q arrives as float, p as double.
  const std::vector<TokenProbability> p = {{1, 0.5}, {2, 0.375}, {5, 0.125}};
  const std::vector<int32_t> ids = {1, 2, 5};
  const std::vector<float> probs = {0.5f, 0.375f, 0.125f};
  for (int32_t draft : ids) EXPECT_TRUE(verify_draft(p, {draft, ids, probs}, kNoDraws).accepted);
}

TEST(RejectionSampling, OneHotDraftsComeOutDistributedAsP) {
  // A deterministic drafter (q one-hot) proposing token 2, then token 9 that
  // p gives no mass at all.
  const std::vector<TokenProbability> p = {{2, 0.5}, {4, 0.25}, {6, 0.15}, {8, 0.1}};
  for (int32_t draft : {2, 9}) {
    const Trial t = run(p, {draft}, {1.0f}, 10, 100000, 11 + draft);
    const auto fit = test::chi_square(t.counts, dense(p, 10));
    EXPECT_TRUE(fit.fits()) << "draft " << draft << ": chi2 " << fit.statistic << " df "
                            << fit.degrees_of_freedom;
    const double rate = double(t.accepted) / 100000.0;
    EXPECT_NEAR(rate, draft == 2 ? 0.5 : 0.0, 0.01);
  }
}

TEST(RejectionSampling, AnyStochasticQComesOutDistributedAsP) {
  // p sparse (as after top-k/top-p), q dense and quite unlike it.
  const int32_t vocab = 12;
  const std::vector<TokenProbability> p = {{0, 0.35}, {3, 0.3}, {4, 0.2}, {7, 0.1}, {11, 0.05}};
  std::vector<int32_t> ids;
  std::vector<float> probs;
  for (int32_t t = 0; t < vocab; ++t) {
    ids.push_back(t);
    probs.push_back(static_cast<float>((t % 4 + 1) / 30.0));
  }
  double sum = 0;
  for (float x : probs) sum += x;
  for (float& x : probs) x = static_cast<float>(x / sum);
  const int n = 200000;
  const Trial t = run(p, ids, probs, vocab, n, 5);
  const auto fit = test::chi_square(t.counts, dense(p, vocab));
  EXPECT_TRUE(fit.fits()) << "chi2 " << fit.statistic << " df " << fit.degrees_of_freedom;
  // Acceptance is sum_x min(p(x), q(x)).
  double expected_rate = 0;
  for (const auto& e : p) expected_rate += std::min<double>(e.probability, probs[e.token]);
  EXPECT_NEAR(double(t.accepted) / n, expected_rate, 0.005);
}

TEST(RejectionSampling, ATopKQAgainstAWiderPComesOutDistributedAsP) {
  const int32_t vocab = 6;
  const std::vector<TokenProbability> p = {{5, 0.4}, {1, 0.3}, {2, 0.2}, {0, 0.1}};
  const Trial t = run(p, {1, 5}, {0.7f, 0.3f}, vocab, 100000, 9);
  const auto fit = test::chi_square(t.counts, dense(p, vocab));
  EXPECT_TRUE(fit.fits()) << "chi2 " << fit.statistic << " df " << fit.degrees_of_freedom;
}

}  // namespace
}  // namespace glmrt
