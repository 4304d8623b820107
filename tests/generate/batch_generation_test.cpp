// Batched decoding: several sequences in one forward give each of them bit
// for bit the logits, and so the tokens, it gets alone — whatever the others'
// positions, prefill or decode, cancellations, context limits, expert cache
// or sampler — and each MoE layer resolves the union of their experts once.
#include "engine_fixture.h"

#include <glmrt/generate/batch_generation.h>
#include <glmrt/generate/speculator.h>
#include <glmrt/model/routing_observer.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <span>
#include <stdexcept>

namespace glmrt {
namespace {

using test_support::kTinyModel;
using test_support::reference_profile;

SamplingParams greedy() {
  SamplingParams p;
  p.temperature = 0;
  return p;
}

SamplingParams sampled(uint64_t seed) {
  SamplingParams p;
  p.temperature = 0.9;
  p.top_k = 40;
  p.top_p = 0.95;
  p.repetition_penalty = 1.1;
  p.seed = seed;
  return p;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

/// Prompts of mixed lengths (past glm_tiny's index_topk of 8, so DSA selects).
std::vector<std::vector<int32_t>> prompts() {
  return {{5, 812, 33, 47, 1000, 2, 640, 71, 9, 300, 18, 555, 7, 90},
          {11, 22, 33},
          {400, 3, 77, 901, 12, 6, 250, 18, 19, 640, 2}};
}

Generation alone(Engine& engine, std::span<const int32_t> prompt, const SamplingParams& params,
                 int max_new) {
  Session session(engine, std::nullopt);
  Sampler sampler(params);
  return generate(session, sampler, prompt, {max_new, {}});
}

struct Streams {
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Sampler>> samplers;
  Session& session(Engine& engine) {
    return *sessions.emplace_back(std::make_unique<Session>(engine, std::nullopt));
  }
  Sampler& sampler(const SamplingParams& p) {
    return *samplers.emplace_back(std::make_unique<Sampler>(p));
  }
};

class BatchGenerationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { engine_ = test_support::open_tiny_engine(); }
  static void TearDownTestSuite() { engine_.reset(); }
  static inline std::unique_ptr<Engine> engine_;
};

TEST_F(BatchGenerationTest, RowsOfAStepTakenTogetherAreTheRowsOfEachSessionAlone) {
  Engine& engine = *engine_;
  const auto p = prompts();
  // Alone: A decodes after its prompt, B runs a prefill chunk after its
  // prompt, C's whole prompt is its first step.
  Session a(engine, std::nullopt), b(engine, std::nullopt), c(engine, std::nullopt);
  a.set_context(p[0]);
  b.set_context(p[1]);
  const std::vector<int32_t> b_chunk = {5, 6, 7, 8, 9, 10, 11};
  const std::vector<float> want_a = a.append(42);
  const std::vector<float> want_b = b.extend(b_chunk);
  const std::vector<float> want_c = c.set_context(p[2]);

  Session ta(engine, std::nullopt), tb(engine, std::nullopt), tc(engine, std::nullopt);
  ta.set_context(p[0]);
  tb.set_context(p[1]);
  tc.keep_prefix(p[2]);
  const int32_t token = 42;
  const SessionStep steps[] = {
      {ta, std::span(&token, 1), false, true}, {tb, b_chunk, true, true}, {tc, p[2], true, true}};
  const auto got = Session::run_together(steps);
  const int64_t V = engine.config().vocab_size;
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(same_bits(got[0], want_a));
  EXPECT_TRUE(same_bits(got[1], std::span(want_b).last(V)));  // extend: every row's logits
  EXPECT_TRUE(same_bits(got[2], want_c));
  EXPECT_EQ(ta.tokens(), a.tokens());
  EXPECT_EQ(tb.tokens(), b.tokens());
  EXPECT_EQ(tc.tokens(), c.tokens());
  // And the steps after: each session goes on as alone.
  const SessionStep next[] = {{ta, std::span(&token, 1), false, true},
                              {tc, std::span(&token, 1), false, true}};
  const auto then = Session::run_together(next);
  EXPECT_TRUE(same_bits(then[0], a.append(42)));
  EXPECT_TRUE(same_bits(then[1], c.append(42)));
}

TEST_F(BatchGenerationTest, GreedyStreamsGiveTheOracleTokensWhileOthersJoinAndPrefill) {
  const std::vector<OracleCase> cases = load_oracle(kTinyModel / "ref.json");
  ASSERT_GE(cases.size(), 2u);
  Streams s;
  BatchGeneration batch(*engine_);
  std::vector<int> ids;
  const auto add = [&](const OracleCase& c) {
    ids.push_back(batch.add(s.session(*engine_), s.sampler(greedy()), c.prompt_ids,
                            {static_cast<int>(c.generated_ids.size()), {}}));
  };
  add(cases[0]);
  ASSERT_TRUE(batch.step());  // its prompt
  ASSERT_TRUE(batch.step());  // its first decode
  // The rest join: their prompts run in the steps where the first decodes.
  for (size_t i = 1; i < cases.size(); ++i) add(cases[i]);
  ASSERT_TRUE(batch.step());
  EXPECT_EQ(batch.last_step().decode, 1);
  EXPECT_GT(batch.last_step().prefill, 0);
  batch.run();
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_TRUE(batch.finished(ids[i]));
    EXPECT_EQ(batch.result(ids[i]).tokens, cases[i].generated_ids) << cases[i].name;
    EXPECT_EQ(batch.result(ids[i]).reason, StopReason::length) << cases[i].name;
  }
  EXPECT_FALSE(batch.step());
}

TEST_F(BatchGenerationTest, ACancelledStreamLeavesTheOthersUnchanged) {
  const auto p = prompts();
  constexpr int kNew = 12;
  Streams s;
  BatchGeneration batch(*engine_);
  std::vector<int> ids;
  for (const auto& prompt : p)
    ids.push_back(batch.add(s.session(*engine_), s.sampler(greedy()), prompt, {kNew, {}}));
  // One prompt runs per step: stream 1 decodes once stream 0's prompt ran.
  while (batch.result(ids[1]).tokens.size() < 4) ASSERT_TRUE(batch.step());
  batch.cancel(ids[1]);
  EXPECT_EQ(batch.active(), 2);
  batch.run();
  for (size_t i = 0; i < p.size(); ++i) {
    const Generation want = alone(*engine_, p[i], greedy(), kNew);
    const Generation& got = batch.result(ids[i]);
    if (i == 1) {
      EXPECT_EQ(got.reason, StopReason::cancelled);
      ASSERT_EQ(got.tokens.size(), 4u);
      EXPECT_TRUE(std::equal(got.tokens.begin(), got.tokens.end(), want.tokens.begin()));
    } else {
      EXPECT_EQ(got.tokens, want.tokens) << "stream " << i;
      EXPECT_EQ(got.reason, StopReason::length);
    }
  }
}

TEST_F(BatchGenerationTest, TheCallbackCancelsItsOwnStreamOnly) {
  const auto p = prompts();
  Streams s;
  BatchGeneration batch(*engine_);
  int seen = 0;
  const int stopped = batch.add(s.session(*engine_), s.sampler(greedy()), p[0], {10, {}},
                                [&](int32_t) { return ++seen < 2; });
  const int other = batch.add(s.session(*engine_), s.sampler(greedy()), p[2], {10, {}});
  batch.run();
  EXPECT_EQ(batch.result(stopped).reason, StopReason::cancelled);
  EXPECT_EQ(batch.result(stopped).tokens.size(), 2u);
  EXPECT_EQ(batch.result(other).tokens, alone(*engine_, p[2], greedy(), 10).tokens);
}

TEST_F(BatchGenerationTest, ACallbackThatThrowsEndsItsStreamWithTheErrorAndTheOthersGoOn) {
  // A server's stream whose constraint or client fails mid-answer.
  const auto p = prompts();
  Streams s;
  BatchGeneration batch(*engine_);
  int seen = 0;
  const int failing =
      batch.add(s.session(*engine_), s.sampler(greedy()), p[0], {10, {}},
                [&](int32_t, std::span<const float> logits) {
                  EXPECT_FALSE(logits.empty());  // every token is decoded: it has logits
                  if (++seen == 3) throw std::runtime_error("the client's stream broke");
                  return true;
                });
  const int other = batch.add(s.session(*engine_), s.sampler(greedy()), p[2], {10, {}});
  batch.run();
  ASSERT_TRUE(batch.error(failing));
  EXPECT_THROW(std::rethrow_exception(batch.error(failing)), std::runtime_error);
  EXPECT_EQ(batch.result(failing).reason, StopReason::cancelled);
  EXPECT_FALSE(batch.error(other));
  EXPECT_EQ(batch.result(other).tokens, alone(*engine_, p[2], greedy(), 10).tokens);
  // A finished stream can be forgotten (a server adds streams while it runs).
  batch.forget(failing);
  EXPECT_THROW(batch.result(failing), Error);
  EXPECT_EQ(batch.result(other).reason, StopReason::length);
}

TEST_F(BatchGenerationTest, AStreamReachingTheContextLimitStopsAndTheOthersGoOn) {
  Profile profile = reference_profile();
  profile.max_context = 20;
  auto engine = Engine::open(profile, kTinyModel);
  const auto p = prompts();  // 14 and 3 tokens
  Streams s;
  BatchGeneration batch(*engine);
  const int full = batch.add(s.session(*engine), s.sampler(greedy()), p[0], {100, {}});
  const int other = batch.add(s.session(*engine), s.sampler(greedy()), p[1], {16, {}});
  batch.run();
  const Generation want_full = alone(*engine, p[0], greedy(), 100);
  EXPECT_EQ(want_full.reason, StopReason::context_full);
  EXPECT_EQ(batch.result(full).reason, StopReason::context_full);
  EXPECT_EQ(batch.result(full).tokens, want_full.tokens);
  EXPECT_EQ(batch.result(other).reason, StopReason::length);
  EXPECT_GT(batch.result(other).tokens.size(), batch.result(full).tokens.size());
  EXPECT_EQ(batch.result(other).tokens, alone(*engine, p[1], greedy(), 16).tokens);
  // A prompt that cannot fit is refused when it is added, naming the limit.
  std::vector<int32_t> long_prompt(21, 7);
  try {
    batch.add(s.session(*engine), s.sampler(greedy()), long_prompt, {4, {}});
    ADD_FAILURE() << "a 21-token prompt was accepted with max_context 20";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("memory.max_context = 20"), std::string::npos) << e.what();
  }
}

TEST_F(BatchGenerationTest, SampledStreamsDrawWhatEachDrawsAloneWithItsSeed) {
  const auto p = prompts();
  constexpr int kNew = 16;
  Streams s;
  BatchGeneration batch(*engine_);
  std::vector<int> ids;
  for (size_t i = 0; i < p.size(); ++i)
    ids.push_back(batch.add(s.session(*engine_), s.sampler(sampled(100 + i)), p[i], {kNew, {}}));
  // The same prompt and seed twice: two streams, one answer.
  const int twin = batch.add(s.session(*engine_), s.sampler(sampled(100)), p[0], {kNew, {}});
  batch.run();
  for (size_t i = 0; i < p.size(); ++i)
    EXPECT_EQ(batch.result(ids[i]).tokens, alone(*engine_, p[i], sampled(100 + i), kNew).tokens)
        << "stream " << i;
  EXPECT_EQ(batch.result(twin).tokens, batch.result(ids[0]).tokens);
}

/// Every MoE call's rows' choices, for counting the union per layer.
class RoutingRecorder : public RoutingObserver {
 public:
  void on_routed(int layer, int64_t, std::span<const int32_t> experts) override {
    std::set<int32_t> distinct(experts.begin(), experts.end());
    calls.push_back({layer, distinct.size(), experts.size()});
  }
  struct Call {
    int layer;
    size_t distinct, choices;
  };
  std::vector<Call> calls;
};

TEST_F(BatchGenerationTest, StreamedExpertsAreResolvedOnceForAllRowsAndChangeNoToken) {
  Profile profile = reference_profile();
  profile.expert_cache_per_layer = 4;  // of 16: experts come and go
  auto engine = Engine::open(profile, kTinyModel);
  const auto p = prompts();
  constexpr int kNew = 10;
  Streams s;
  BatchGeneration batch(*engine);
  std::vector<int> ids;
  for (const auto& prompt : p)
    ids.push_back(batch.add(s.session(*engine), s.sampler(greedy()), prompt, {kNew, {}}));
  for (size_t i = 0; i < p.size(); ++i) ASSERT_TRUE(batch.step());  // a prompt per step
  EXPECT_EQ(batch.last_step().decode, 2);
  // One decode step of three rows: the store looks up each layer's union once.
  RoutingRecorder recorder;
  engine->model().set_routing_observer(&recorder);
  const ExpertStoreStats before = engine->experts().stats();
  ASSERT_TRUE(batch.step());
  const ExpertStoreStats after = engine->experts().stats();
  engine->model().set_routing_observer(nullptr);
  EXPECT_EQ(batch.last_step().decode, 3);
  uint64_t distinct = 0, choices = 0;
  for (const auto& call : recorder.calls) {
    distinct += call.distinct;
    choices += call.choices;
  }
  EXPECT_EQ(choices, 3u * static_cast<uint64_t>(engine->model().experts_per_position()));
  EXPECT_EQ(after.lookups() - before.lookups(), distinct);
  EXPECT_LT(distinct, choices);  // 3 x 4 choices of 16 experts per layer share some
  batch.run();
  EXPECT_GT(engine->experts().stats().misses, 0u);
  for (size_t i = 0; i < p.size(); ++i)
    EXPECT_EQ(batch.result(ids[i]).tokens, alone(*engine, p[i], greedy(), kNew).tokens)
        << "stream " << i;
}

TEST_F(BatchGenerationTest, RefusesWhatItCannotRun) {
  const auto p = prompts();
  Streams s;
  BatchGeneration batch(*engine_);
  Session& shared = s.session(*engine_);
  batch.add(shared, s.sampler(greedy()), p[0], {4, {}});
  EXPECT_THROW(batch.add(shared, s.sampler(greedy()), p[1], {4, {}}), std::exception);
  EXPECT_THROW(batch.add(s.session(*engine_), s.sampler(greedy()), {}, {4, {}}), std::exception);
  EXPECT_THROW(batch.cancel(7), std::exception);
  // The same session twice in one step.
  const int32_t token = 3;
  Session one(*engine_, std::nullopt);
  one.set_context(p[1]);
  const SessionStep twice[] = {{one, std::span(&token, 1), false, true},
                               {one, std::span(&token, 1), false, true}};
  EXPECT_THROW(Session::run_together(twice), std::exception);
  EXPECT_EQ(one.tokens().size(), p[1].size());  // unchanged
  // A forward trace records one sequence's positions: a step of two is
  // refused, naming the trace, and changes neither session.
  Session other(*engine_, std::nullopt);
  other.set_context(p[2]);
  ForwardTrace trace;
  engine_->model().set_trace(&trace);
  const SessionStep pair[] = {{one, std::span(&token, 1), false, true},
                              {other, std::span(&token, 1), false, true}};
  try {
    Session::run_together(pair);
    ADD_FAILURE() << "a traced step of two sequences ran";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("trace"), std::string::npos) << e.what();
  }
  engine_->model().set_trace(nullptr);
  EXPECT_EQ(one.tokens().size(), p[1].size());
  EXPECT_EQ(other.tokens().size(), p[2].size());
  batch.run();
  EXPECT_EQ(batch.result(0).tokens, alone(*engine_, p[0], greedy(), 4).tokens);
}

TEST_F(BatchGenerationTest, OnePromptRunsPerStepBesideTheOthersDecodeRows) {
  const auto p = prompts();
  Streams s;
  BatchGeneration batch(*engine_);
  for (const auto& prompt : p) batch.add(s.session(*engine_), s.sampler(greedy()), prompt, {6, {}});
  for (size_t i = 0; i < p.size(); ++i) {
    ASSERT_TRUE(batch.step());
    EXPECT_EQ(batch.last_step().prefill, static_cast<int64_t>(p[i].size()));
    EXPECT_EQ(batch.last_step().decode, static_cast<int64_t>(i));
  }
}

// Streams whose sessions draft verify their drafts in the batch's forward,
// beside a stream that does not: every answer is the one it gets alone
// without drafting (greedy), the drafters' MTP rows follow each sequence.
TEST_F(BatchGenerationTest, DraftingStreamsVerifyInTheSameForwardAndKeepTheirTokens) {
  const auto p = prompts();
  constexpr int kNew = 14;
  const DraftPolicy always{3, 1, false};  // fixed: every step verifies what it drafts
  std::vector<PluginChoice> drafters = {{"draft-ngram", {{"min_n", "0"}}, {}}};
  if (engine_->model().has_mtp()) drafters.push_back({"draft-mtp", {}, {}});
  for (const PluginChoice& choice : drafters) {
    Streams s;
    Session mtp_one(*engine_, engine_->draft_setup(choice, always));
    Session mtp_two(*engine_, engine_->draft_setup(choice, always));
    BatchGeneration batch(*engine_);
    const int a = batch.add(mtp_one, s.sampler(greedy()), p[0], {kNew, {}});
    const int plain = batch.add(s.session(*engine_), s.sampler(greedy()), p[1], {kNew, {}});
    const int b = batch.add(mtp_two, s.sampler(greedy()), p[2], {kNew, {}});
    int64_t draft_rows = 0;
    while (batch.step()) draft_rows += batch.last_step().drafts;
    EXPECT_EQ(batch.result(a).tokens, alone(*engine_, p[0], greedy(), kNew).tokens) << choice.name;
    EXPECT_EQ(batch.result(plain).tokens, alone(*engine_, p[1], greedy(), kNew).tokens);
    EXPECT_EQ(batch.result(b).tokens, alone(*engine_, p[2], greedy(), kNew).tokens) << choice.name;
    const int64_t proposed =
        mtp_one.speculator()->stats().proposed + mtp_two.speculator()->stats().proposed;
    if (choice.name == "draft-mtp") {
      EXPECT_GT(draft_rows, 0);
      EXPECT_GT(proposed, 0);
    }
    // The sessions hold prompt + answer: no rejected or unneeded row stays.
    EXPECT_EQ(mtp_one.tokens().size(), p[0].size() + kNew - 1);
    EXPECT_EQ(mtp_two.tokens().size(), p[2].size() + kNew - 1);
  }
}

TEST_F(BatchGenerationTest, AStreamThatNeedsEveryTokensLogitsDoesNotDraft) {
  const auto p = prompts();
  Streams s;
  Session drafted(*engine_,
                  engine_->draft_setup({"draft-ngram", {}, {}}, DraftPolicy{3, 1, false}));
  BatchGeneration batch(*engine_);
  int without_logits = 0;
  const int id = batch.add(
      drafted, s.sampler(greedy()), p[0], {8, {}},
      [&](int32_t, std::span<const float> logits) {
        return (without_logits += logits.empty()), true;
      },
      LogitsNeed::every_token);
  batch.run();
  EXPECT_EQ(without_logits, 0);
  EXPECT_EQ(drafted.speculator()->stats().proposed, 0);
  EXPECT_EQ(batch.result(id).tokens, alone(*engine_, p[0], greedy(), 8).tokens);
}

}  // namespace
}  // namespace glmrt
