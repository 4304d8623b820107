// Sampler filters and penalties on hand-made logits, where the surviving
// tokens and their probabilities can be worked out by hand.
#include <glmrt/base/error.h>
#include <glmrt/sampling/sampler.h>

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace glmrt {
namespace {

// Logits whose softmax (temperature 1) is exactly `probabilities`.
std::vector<float> logits_for(const std::vector<double>& probabilities) {
  std::vector<float> logits;
  for (double p : probabilities) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

SamplingParams sampling(double temperature = 1.0) {
  SamplingParams p;
  p.temperature = temperature;
  p.seed = 7;
  return p;
}

std::set<int32_t> support(const std::vector<TokenProbability>& dist) {
  std::set<int32_t> tokens;
  for (const auto& d : dist) tokens.insert(d.token);
  return tokens;
}

double total(const std::vector<TokenProbability>& dist) {
  double sum = 0;
  for (const auto& d : dist) sum += d.probability;
  return sum;
}

const std::vector<double> kProbabilities = {0.05, 0.5, 0.15, 0.3};  // order: 1, 3, 2, 0

TEST(Sampler, SameSeedSameDrawsOtherSeedOtherDraws) {
  const std::vector<float> logits = {0.1f, 0.3f, -0.2f, 0.0f, 0.25f, 0.05f, -0.1f, 0.2f};
  auto draws = [&](uint64_t seed) {
    SamplingParams p = sampling();
    p.seed = seed;
    Sampler sampler(p);
    std::vector<int32_t> out;
    for (int i = 0; i < 200; ++i) out.push_back(sampler.sample(logits, {}, {}));
    return out;
  };
  EXPECT_EQ(draws(42), draws(42));
  EXPECT_NE(draws(42), draws(43));
  const auto some = draws(42);
  EXPECT_GT(std::set<int32_t>(some.begin(), some.end()).size(), 4u)
      << "200 draws over 8 near-uniform tokens should hit more than 4 of them";
}

TEST(Sampler, GreedyTakesTheArgmaxAndTheLowestIdOnTies) {
  Sampler greedy(sampling(0.0));
  EXPECT_EQ(greedy.sample(std::vector<float>{0.f, 3.f, 1.f, 3.f}, {}, {}), 1);
  const auto dist = greedy.distribution(std::vector<float>{5.f, 1.f}, {}, {});
  ASSERT_EQ(dist.size(), 1u);
  EXPECT_EQ(dist[0].token, 0);
  EXPECT_EQ(dist[0].probability, 1.0);
}

TEST(Sampler, WithoutFiltersTheDistributionIsTheSoftmax) {
  const auto dist = Sampler(sampling()).distribution(logits_for(kProbabilities), {}, {});
  ASSERT_EQ(dist.size(), 4u);
  EXPECT_EQ(dist[0].token, 1);  // most probable first
  for (const auto& d : dist) EXPECT_NEAR(d.probability, kProbabilities[d.token], 1e-6);
}

TEST(Sampler, LogitBiasShiftsAndMinusHundredBans) {
  SamplingParams p = sampling();
  p.logit_bias = {{1, -100}, {0, std::log(2.0)}};
  const auto dist = Sampler(p).distribution(logits_for(kProbabilities), {}, {});
  EXPECT_EQ(support(dist), (std::set<int32_t>{0, 2, 3}));  // token 1 banned
  // Token 0 doubled against the rest, then renormalized: 0.1, 0.15, 0.3 of 0.55.
  for (const auto& d : dist)
    EXPECT_NEAR(d.probability, (d.token == 0 ? 0.1 : kProbabilities[d.token]) / 0.55, 1e-6);
  SamplingParams greedy = sampling(0.0);
  greedy.logit_bias = {{1, -100}};
  EXPECT_EQ(Sampler(greedy).sample(logits_for(kProbabilities), {}, {}), 3);
}

TEST(Sampler, TemperatureSharpensAndFlattens) {
  const auto logits = logits_for({0.2, 0.8});
  const auto cold = Sampler(sampling(0.5)).distribution(logits, {}, {});
  const auto hot = Sampler(sampling(2.0)).distribution(logits, {}, {});
  // p ∝ q^(1/T): at T = 0.5, 0.8^2 / (0.8^2 + 0.2^2); at T = 2, sqrt ratios.
  EXPECT_NEAR(cold[0].probability, 0.64 / 0.68, 1e-6);
  EXPECT_NEAR(hot[0].probability, std::sqrt(0.8) / (std::sqrt(0.8) + std::sqrt(0.2)), 1e-6);
}

TEST(Sampler, TopKKeepsTheKMostProbable) {
  SamplingParams p = sampling();
  p.top_k = 2;
  const auto dist = Sampler(p).distribution(logits_for(kProbabilities), {}, {});
  EXPECT_EQ(support(dist), (std::set<int32_t>{1, 3}));
  EXPECT_NEAR(total(dist), 1.0, 1e-12);
  EXPECT_NEAR(dist[0].probability, 0.5 / 0.8, 1e-6);
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  auto kept = [](double top_p) {
    SamplingParams p = sampling();
    p.top_p = top_p;
    return support(Sampler(p).distribution(logits_for(kProbabilities), {}, {}));
  };
  EXPECT_EQ(kept(0.4), (std::set<int32_t>{1}));
  EXPECT_EQ(kept(0.75), (std::set<int32_t>{1, 3}));
  EXPECT_EQ(kept(0.9), (std::set<int32_t>{1, 3, 2}));
  EXPECT_EQ(kept(0.99), (std::set<int32_t>{0, 1, 2, 3}));
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheTopProbability) {
  auto kept = [](double min_p) {
    SamplingParams p = sampling();
    p.min_p = min_p;
    return support(Sampler(p).distribution(logits_for(kProbabilities), {}, {}));
  };
  EXPECT_EQ(kept(0.05), (std::set<int32_t>{0, 1, 2, 3}));  // floor 0.025
  EXPECT_EQ(kept(0.2), (std::set<int32_t>{1, 2, 3}));      // floor 0.1
  EXPECT_EQ(kept(0.5), (std::set<int32_t>{1, 3}));         // floor 0.25
  EXPECT_EQ(kept(0.9), (std::set<int32_t>{1}));            // floor 0.45
}

TEST(Sampler, FiltersComposeAndDrawsStayInTheSupport) {
  SamplingParams p = sampling();
  p.top_k = 3;     // {1, 3, 2}
  p.top_p = 0.85;  // of those, renormalised: 0.5/0.95, 0.3/0.95 -> 0.84 < 0.85 -> keep 2 too
  p.min_p = 0.35;  // floor 0.35 * 0.5 = 0.175: drops 2 (0.15)
  Sampler sampler(p);
  const auto dist = sampler.distribution(logits_for(kProbabilities), {}, {});
  EXPECT_EQ(support(dist), (std::set<int32_t>{1, 3}));
  EXPECT_NEAR(total(dist), 1.0, 1e-12);
  for (int i = 0; i < 2000; ++i) {
    const int32_t t = sampler.sample(logits_for(kProbabilities), {}, {});
    ASSERT_TRUE(t == 1 || t == 3) << "drew filtered-out token " << t;
  }
}

TEST(Sampler, TokensWithZeroProbabilityAreNeverDrawn) {
  const std::vector<float> logits = {0.f, -INFINITY, 0.f, -INFINITY};
  const auto dist = Sampler(sampling()).distribution(logits, {}, {});
  EXPECT_EQ(support(dist), (std::set<int32_t>{0, 2}));
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeSeenLogits) {
  SamplingParams p = sampling();
  p.repetition_penalty = 2.0;
  const std::vector<float> logits = {2.f, -1.f, 1.f, 0.5f};
  const std::vector<int32_t> context = {0, 1, 0};  // seen twice still counts once
  const auto dist = Sampler(p).distribution(logits, context, {});
  // Penalised logits: {1, -2, 1, 0.5}.
  const double z = std::exp(1.0) * 2 + std::exp(-2.0) + std::exp(0.5);
  for (const auto& d : dist) {
    const double expected[] = {1.0, -2.0, 1.0, 0.5};
    EXPECT_NEAR(d.probability, std::exp(expected[d.token]) / z, 1e-9) << "token " << d.token;
  }
  // Greedy: token 0 leads (2 > 1.5) until the penalty halves it to 1.
  p.temperature = 0;
  EXPECT_EQ(Sampler(p).sample(std::vector<float>{2.f, -1.f, 1.5f}, context, {}), 2);
}

TEST(Sampler, PresencePenaltyHitsGeneratedTokensOnceAndIgnoresThePrompt) {
  SamplingParams p = sampling(0.0);
  p.presence_penalty = 1.0;
  const std::vector<float> logits = {3.f, 2.5f};
  Sampler sampler(p);
  EXPECT_EQ(sampler.sample(logits, std::vector<int32_t>{0}, {}), 0) << "prompt tokens are free";
  EXPECT_EQ(sampler.sample(logits, {}, std::vector<int32_t>{0}), 1);
  p.temperature = 1.0;
  const Sampler soft(p);
  const auto once = soft.distribution(logits, {}, std::vector<int32_t>{0});
  const auto thrice = soft.distribution(logits, {}, std::vector<int32_t>{0, 0, 0});
  ASSERT_EQ(once.size(), thrice.size());
  for (size_t i = 0; i < once.size(); ++i)
    EXPECT_DOUBLE_EQ(once[i].probability, thrice[i].probability);
  EXPECT_NEAR(once[0].probability, 1.0 / (1.0 + std::exp(-0.5)), 1e-9);  // logits {2, 2.5}
}

TEST(Sampler, RejectsOutOfRangeParametersNamingThem) {
  auto message = [](SamplingParams p) {
    try {
      Sampler s(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SamplingParams p = sampling();
  p.temperature = -1;
  EXPECT_NE(message(p).find("temperature"), std::string::npos);
  p = sampling();
  p.top_p = 0;
  EXPECT_NE(message(p).find("top_p"), std::string::npos);
  p = sampling();
  p.min_p = 1;
  EXPECT_NE(message(p).find("min_p"), std::string::npos);
  p = sampling();
  p.top_k = -2;
  EXPECT_NE(message(p).find("top_k"), std::string::npos);
  p = sampling();
  p.repetition_penalty = 0;
  EXPECT_NE(message(p).find("repetition_penalty"), std::string::npos);
  p = sampling();
  p.max_new_tokens = -1;
  EXPECT_NE(message(p).find("max_new_tokens"), std::string::npos);
  EXPECT_THROW(Sampler(sampling()).sample(std::vector<float>{}, {}, {}), Error);
  EXPECT_THROW(Sampler(sampling()).sample(std::vector<float>{NAN}, {}, {}), Error);
}

}  // namespace
}  // namespace glmrt
