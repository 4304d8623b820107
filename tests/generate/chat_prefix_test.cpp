// Multi-turn chat reuses the cache: a second turn set on top of the first
// gives the same logits as prefilling the whole conversation in a fresh
// session, while recomputing only from where the prompts diverge.
#include "engine_fixture.h"

#include <glmrt/generate/conversation.h>
#include <glmrt/generate/generator.h>
#include <glmrt/generate/stop_tokens.h>
#include <glmrt/text/tokenizer.h>

#include <gtest/gtest.h>

#include <cmath>

namespace glmrt {
namespace {

using glmrt::test_support::kTinyModel;

std::vector<int32_t> encode(const text::Tokenizer& tokenizer, const std::string& prompt) {
  const auto ids = tokenizer.encode(prompt, false);
  return {ids.begin(), ids.end()};
}

float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

void expect_second_turn_reuses_the_first(bool thinking) {
  auto engine = glmrt::test_support::open_tiny_engine();
  const auto tokenizer = text::Tokenizer::from_file(kTinyModel / "tokenizer.json");
  const auto stop = stop_token_ids(engine->model().config(), kTinyModel);
  ChatOptions options;
  options.enable_thinking = thinking;
  Conversation chat(options);
  const auto chat_template = text::ModelChatTemplate::for_model(kTinyModel);

  // Turn 1: generate an answer the way `glmrt chat` does.
  chat.add_user("hello there");
  const auto prompt1 = encode(tokenizer, chat.render(chat_template));
  Session session(*engine);
  SamplingParams greedy;
  greedy.temperature = 0;
  Sampler sampler(greedy);
  const Generation answer = generate(session, sampler, prompt1, {12, stop});
  ASSERT_FALSE(answer.tokens.empty());
  const std::vector<text::TokenId> answer_ids(answer.tokens.begin(), answer.tokens.end());
  chat.add_assistant(tokenizer.decode(answer_ids));

  // Turn 1 as the session saw it, complete (prompt + answer).
  std::vector<int32_t> turn1 = prompt1;
  turn1.insert(turn1.end(), answer.tokens.begin(), answer.tokens.end());
  session.set_context(turn1);

  // Turn 2: the whole conversation re-rendered.
  chat.add_user("tell me more");
  const auto prompt2 = encode(tokenizer, chat.render(chat_template));
  const SessionStats before = session.stats();
  const auto reused_logits = session.set_context(prompt2);
  const SessionStats turn2 = session_stats_since(session.stats(), before);
  const int64_t reused = turn2.reused_tokens;
  const int64_t prefilled = turn2.prefilled_tokens;
  EXPECT_EQ(turn2.decoded_tokens, 0) << "set_context decodes nothing";

  Session fresh(*engine);
  const auto fresh_logits = fresh.set_context(prompt2);

  ASSERT_EQ(reused_logits.size(), fresh_logits.size());
  EXPECT_LE(max_abs_difference(reused_logits, fresh_logits), 1e-4f) << "thinking=" << thinking;
  EXPECT_GT(reused, 0);
  // At least the first turn's whole prompt is shared (the template renders
  // the conversation so far unchanged), and only the rest is computed.
  EXPECT_GE(reused, static_cast<int64_t>(prompt1.size())) << "thinking=" << thinking;
  EXPECT_EQ(reused + prefilled, static_cast<int64_t>(prompt2.size()));
  EXPECT_EQ(session.tokens(), fresh.tokens());
}

TEST(ChatPrefix, SecondTurnMatchesAFreshPrefillWithThinking) {
  expect_second_turn_reuses_the_first(true);
}

TEST(ChatPrefix, SecondTurnMatchesAFreshPrefillWithoutThinking) {
  expect_second_turn_reuses_the_first(false);
}

TEST(ChatPrefix, ResetForgetsTheCache) {
  auto engine = glmrt::test_support::open_tiny_engine();
  Session session(*engine);
  const std::vector<int32_t> prompt = {5, 6, 7, 8};
  const auto first = session.set_context(prompt);
  session.reset();
  EXPECT_TRUE(session.tokens().empty());
  const SessionStats before = session.stats();
  const auto again = session.set_context(prompt);
  EXPECT_EQ(session.stats().reused_tokens, before.reused_tokens);
  EXPECT_LE(max_abs_difference(first, again), 1e-6f);
}

}  // namespace
}  // namespace glmrt
