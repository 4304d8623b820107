// An answer that ends on a draft (a stop token the drafter proposed and
// verification accepted) in a step that dropped a later, rejected draft: the
// session keeps exactly prompt + answer, alone and in a batch, and its next
// turn runs as from any kept prefix.
#include "engine_fixture.h"
#include "test_drafters.h"

#include <glmrt/generate/batch_generation.h>
#include <glmrt/generate/generator.h>
#include <glmrt/generate/speculator.h>

#include <gtest/gtest.h>

#include <algorithm>

namespace glmrt {
namespace {

using test_support::greedy_sampling;
using test_support::ScriptedDrafter;

class DraftStopTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { engine_ = test_support::open_tiny_engine(); }
  static void TearDownTestSuite() { engine_.reset(); }
  static inline std::unique_ptr<Engine> engine_;

  // The prompt, its greedy answer without drafting, and a stop token that
  // comes second in that answer (and not first).
  struct Case {
    std::vector<int32_t> prompt{5, 812, 33, 47, 1000, 2, 640, 71, 9, 300};
    std::vector<int32_t> answer;
    int32_t stop = -1;
  };
  static Case stopping_case() {
    Case c;
    Session plain(*engine_, std::nullopt);
    Sampler sampler(greedy_sampling());
    c.answer = generate(plain, sampler, c.prompt, {8, {}}).tokens;
    for (size_t i = 1; i < c.answer.size() && c.stop < 0; ++i)
      if (std::find(c.answer.begin(), c.answer.begin() + static_cast<int64_t>(i), c.answer[i]) ==
          c.answer.begin() + static_cast<int64_t>(i))
        c.stop = c.answer[i];
    return c;
  }
  // Drafts the answer as it goes on, the third draft wrong: the first step
  // verifies answer[1], answer[2] and a wrong token, accepting the first two.
  static std::unique_ptr<ScriptedDrafter> drafter_for(const Case& c) {
    std::vector<int32_t> script = c.prompt;
    script.insert(script.end(), c.answer.begin(), c.answer.end());
    return std::make_unique<ScriptedDrafter>(
        script, 3, static_cast<int32_t>(engine_->model().config().vocab_size));
  }
  static std::vector<int32_t> until_stop(const Case& c) {
    return {c.answer.begin(), std::find(c.answer.begin(), c.answer.end(), c.stop)};
  }
};

TEST_F(DraftStopTest, AnAnswerEndingOnAnAcceptedDraftKeepsPromptAndAnswerAlone) {
  const Case c = stopping_case();
  ASSERT_GE(c.stop, 0) << "the answer repeats one token";
  const auto drafter = drafter_for(c);
  Session drafted(*engine_, borrowed_drafter(*drafter, {3, 1, false}, "scripted"));
  Sampler sampler(greedy_sampling());
  const std::vector<int32_t> stops{c.stop};
  const Generation g = generate(drafted, sampler, c.prompt, {8, stops});
  EXPECT_EQ(g.reason, StopReason::eos);
  EXPECT_EQ(g.tokens, until_stop(c));
  EXPECT_EQ(drafted.tokens().size(), c.prompt.size() + g.tokens.size());
  EXPECT_GT(drafted.speculator()->stats().accepted, 0);
  // The next turn goes on from the kept prefix as a session without drafts.
  std::vector<int32_t> next = c.prompt;
  next.insert(next.end(), g.tokens.begin(), g.tokens.end());
  next.push_back(c.stop);
  Session plain(*engine_, std::nullopt);
  Sampler again(greedy_sampling()), again_plain(greedy_sampling());
  EXPECT_EQ(generate(drafted, again, next, {4, {}}).tokens,
            generate(plain, again_plain, next, {4, {}}).tokens);
}

TEST_F(DraftStopTest, AnAnswerEndingOnAnAcceptedDraftKeepsPromptAndAnswerInABatch) {
  const Case c = stopping_case();
  ASSERT_GE(c.stop, 0) << "the answer repeats one token";
  const auto drafter = drafter_for(c);
  Session drafted(*engine_, borrowed_drafter(*drafter, {3, 1, false}, "scripted"));
  Session other(*engine_, std::nullopt);
  Sampler sampler(greedy_sampling()), other_sampler(greedy_sampling());
  const std::vector<int32_t> stops{c.stop};
  const std::vector<int32_t> other_prompt{11, 22, 33};
  BatchGeneration batch(*engine_);
  const int id = batch.add(drafted, sampler, c.prompt, {8, stops});
  const int plain = batch.add(other, other_sampler, other_prompt, {6, {}});
  batch.run();
  ASSERT_FALSE(batch.error(id));
  EXPECT_EQ(batch.result(id).reason, StopReason::eos);
  EXPECT_EQ(batch.result(id).tokens, until_stop(c));
  EXPECT_EQ(drafted.tokens().size(), c.prompt.size() + batch.result(id).tokens.size());
  EXPECT_GT(drafted.speculator()->stats().accepted, 0);
  Session alone(*engine_, std::nullopt);
  Sampler alone_sampler(greedy_sampling());
  EXPECT_EQ(batch.result(plain).tokens,
            generate(alone, alone_sampler, other_prompt, {6, {}}).tokens);
}

}  // namespace
}  // namespace glmrt
