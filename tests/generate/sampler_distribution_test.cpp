// The sampler draws from the distribution it claims: empirical frequencies of
// many seeded draws against the softmax, with a chi-square bound.
#include <glmrt/sampling/sampler.h>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace glmrt {
namespace {

// Pearson's statistic of `counts` against `probabilities` over `draws` draws.
double chi_square(const std::vector<int>& counts, const std::vector<double>& probabilities,
                  int draws) {
  double statistic = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = probabilities[i] * draws;
    statistic += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return statistic;
}

std::vector<double> softmax(const std::vector<float>& logits, double temperature) {
  std::vector<double> p;
  double sum = 0;
  for (float l : logits) sum += std::exp(l / temperature);
  for (float l : logits) p.push_back(std::exp(l / temperature) / sum);
  return p;
}

// 99.9% quantile of chi-square with 4 degrees of freedom (5 categories):
// a correct sampler exceeds it once in a thousand seeds.
constexpr double kChiSquare4Dof999 = 18.467;

void expect_frequencies_match(double temperature, uint64_t seed) {
  const std::vector<float> logits = {1.0f, 0.2f, -0.5f, 2.0f, 0.0f};
  SamplingParams p;
  p.temperature = temperature;
  p.seed = seed;
  Sampler sampler(p);
  constexpr int kDraws = 20000;
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < kDraws; ++i) {
    const int32_t t = sampler.sample(logits, {}, {});
    ASSERT_GE(t, 0);
    ASSERT_LT(t, static_cast<int32_t>(logits.size()));
    ++counts[t];
  }
  const auto expected = softmax(logits, temperature);
  const double statistic = chi_square(counts, expected, kDraws);
  EXPECT_LT(statistic, kChiSquare4Dof999) << "temperature " << temperature << " seed " << seed;
  // A sampler that ignored the distribution (e.g. uniform) must fail the bound.
  const std::vector<double> uniform(logits.size(), 1.0 / logits.size());
  EXPECT_GT(chi_square(counts, uniform, kDraws), 100 * kChiSquare4Dof999);
}

TEST(SamplerDistribution, TemperatureOneMatchesTheSoftmax) {
  expect_frequencies_match(1.0, 1);
}

TEST(SamplerDistribution, OtherSeedsAndTemperaturesMatchToo) {
  expect_frequencies_match(1.0, 12345);
  expect_frequencies_match(0.7, 2);
}

}  // namespace
}  // namespace glmrt
