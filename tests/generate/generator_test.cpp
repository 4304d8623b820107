// The generation loop on the tiny model: greedy output equals transformers',
// and each way of stopping leaves the session where the contract says.
#include "engine_fixture.h"

#include <glmrt/base/error.h>
#include <glmrt/generate/generator.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

using glmrt::test_support::kTinyModel;
using glmrt::test_support::open_tiny_engine;

SamplingParams greedy() {
  SamplingParams p;
  p.temperature = 0;
  return p;
}

class GeneratorTest : public ::testing::Test {
 protected:
  // Loaded once for the suite: every test makes its own Session.
  static void SetUpTestSuite() {
    engine_ = open_tiny_engine();
    cases_ = load_oracle(kTinyModel / "ref.json");
  }
  static void TearDownTestSuite() { engine_.reset(); }

  static inline std::unique_ptr<Engine> engine_;
  static inline std::vector<OracleCase> cases_;
};

TEST_F(GeneratorTest, GreedyWithoutStopTokensMatchesTransformers) {
  ASSERT_FALSE(cases_.empty());
  for (const auto& c : cases_) {
    Session session(*engine_);
    Sampler sampler(greedy());
    const int n = static_cast<int>(c.generated_ids.size());
    const Generation g = generate(session, sampler, c.prompt_ids, {n, {}});
    EXPECT_EQ(g.tokens, c.generated_ids) << c.name;
    EXPECT_EQ(g.reason, StopReason::length) << c.name;
    // The last token was never decoded: its logits were not needed.
    EXPECT_EQ(session.tokens().size(), c.prompt_ids.size() + n - 1) << c.name;
  }
}

TEST_F(GeneratorTest, AStopTokenEndsTheAnswerWithoutBeingPartOfIt) {
  const auto& c = cases_.front();
  ASSERT_GE(c.generated_ids.size(), 3u);
  const std::vector<int32_t> stop = {c.generated_ids[2]};
  Session session(*engine_);
  Sampler sampler(greedy());
  const Generation g = generate(session, sampler, c.prompt_ids, {100, stop});
  // Greedy reaches the stop token at its first occurrence.
  std::vector<int32_t> expected;
  for (int32_t t : c.generated_ids) {
    if (t == stop[0]) break;
    expected.push_back(t);
  }
  EXPECT_EQ(g.reason, StopReason::eos);
  EXPECT_EQ(g.stop_token, stop[0]);
  EXPECT_EQ(g.tokens, expected);
  EXPECT_EQ(session.tokens().size(), c.prompt_ids.size() + expected.size());
}

TEST_F(GeneratorTest, TheCallbackSeesEveryTokenAndCanCancel) {
  const auto& c = cases_.front();
  Session session(*engine_);
  Sampler sampler(greedy());
  std::vector<int32_t> seen;
  const Generation g = generate(session, sampler, c.prompt_ids, {100, {}}, [&](int32_t t) {
    seen.push_back(t);
    return seen.size() < 3;
  });
  EXPECT_EQ(g.reason, StopReason::cancelled);
  EXPECT_EQ(g.tokens.size(), 3u);
  EXPECT_EQ(seen, g.tokens);
}

TEST_F(GeneratorTest, ContinuingPromptPlusAnswerGivesTheUninterruptedAnswer) {
  const auto& c = cases_.front();
  const int n = static_cast<int>(c.generated_ids.size());
  ASSERT_GE(n, 4);
  Session session(*engine_);
  Sampler sampler(greedy());
  const Generation first = generate(session, sampler, c.prompt_ids, {2, {}});
  std::vector<int32_t> context = c.prompt_ids;
  context.insert(context.end(), first.tokens.begin(), first.tokens.end());
  const int64_t prefilled_before = session.stats().prefilled_tokens;
  const Generation rest = generate(session, sampler, context, {n - 2, {}});
  EXPECT_EQ(session.stats().prefilled_tokens - prefilled_before, 1) << "only the last answer token";
  std::vector<int32_t> all = first.tokens;
  all.insert(all.end(), rest.tokens.begin(), rest.tokens.end());
  EXPECT_EQ(all, c.generated_ids);
}

TEST(Generator, StopsWhenTheContextIsFull) {
  Profile profile = glmrt::test_support::reference_profile();
  profile.max_context = 12;
  auto engine = open_tiny_engine(profile);
  Session session(*engine);
  Sampler sampler(greedy());
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Generation g = generate(session, sampler, prompt, {100, {}});
  EXPECT_EQ(g.reason, StopReason::context_full);
  EXPECT_EQ(session.tokens().size(), 12u);
  EXPECT_EQ(g.tokens.size(), 3u);  // two decoded into the cache, the third only sampled
}

TEST(Generator, ZeroTokensRunsNothingAndBadLimitsAreRejected) {
  auto engine = open_tiny_engine();
  Session session(*engine);
  Sampler sampler(greedy());
  const std::vector<int32_t> prompt = {1, 2, 3};
  const Generation g = generate(session, sampler, prompt, {0, {}});
  EXPECT_TRUE(g.tokens.empty());
  EXPECT_EQ(session.stats().prefilled_tokens, 0);
  EXPECT_THROW(generate(session, sampler, prompt, {-1, {}}), Error);
  const std::vector<int32_t> unsorted = {5, 2};
  EXPECT_THROW(generate(session, sampler, prompt, {4, unsorted}), Error);
}

}  // namespace
}  // namespace glmrt
