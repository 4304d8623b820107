// OpenAI's frequency penalty: subtracted once per time a token was
// generated (the presence penalty once per token), prompt tokens untouched.
#include <glmrt/sampling/sampler.h>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace glmrt {
namespace {

double probability_of(const std::vector<TokenProbability>& dist, int32_t token) {
  for (const auto& d : dist)
    if (d.token == token) return d.probability;
  return 0;
}

TEST(FrequencyPenalty, SubtractsOncePerOccurrence) {
  SamplingParams p;
  p.frequency_penalty = 0.5;
  const Sampler sampler(p);
  const std::vector<float> logits = {0, 0, 0};
  const std::vector<int32_t> generated = {1, 1, 2};  // token 1 twice, token 2 once
  const auto dist = sampler.distribution(logits, generated, generated);
  // Logits become 0, -1, -0.5.
  const double z = 1 + std::exp(-1.0) + std::exp(-0.5);
  EXPECT_NEAR(probability_of(dist, 0), 1 / z, 1e-12);
  EXPECT_NEAR(probability_of(dist, 1), std::exp(-1.0) / z, 1e-12);
  EXPECT_NEAR(probability_of(dist, 2), std::exp(-0.5) / z, 1e-12);
}

TEST(FrequencyPenalty, AddsToThePresencePenaltyAndIgnoresThePrompt) {
  SamplingParams p;
  p.frequency_penalty = 1.0;
  p.presence_penalty = 0.25;
  const Sampler sampler(p);
  const std::vector<float> logits = {0, 0, 0};
  const std::vector<int32_t> context = {0, 0, 0, 2};  // the prompt repeats token 0
  const std::vector<int32_t> generated = {2};
  const auto dist = sampler.distribution(logits, context, generated);
  const double z = 2 + std::exp(-1.25);  // token 2: -1 - 0.25
  EXPECT_NEAR(probability_of(dist, 0), 1 / z, 1e-12);
  EXPECT_NEAR(probability_of(dist, 2), std::exp(-1.25) / z, 1e-12);
}

TEST(FrequencyPenalty, ANegativePenaltyFavoursRepeats) {
  SamplingParams p;
  p.temperature = 0;
  p.frequency_penalty = -2;
  Sampler sampler(p);
  const std::vector<float> logits = {1.0f, 0.0f};
  const std::vector<int32_t> generated = {1};
  EXPECT_EQ(sampler.sample(logits, generated, generated), 1);
}

}  // namespace
}  // namespace glmrt
