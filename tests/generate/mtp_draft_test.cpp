// draft-mtp through the host reproduces the oracle's MTP predictions at f32:
// the first draft of every decode step is transformers' MTP argmax for that
// position — with the prompt's rows absorbed during prefill, rows added by
// the drafter kept or dropped by verification — and chained drafts follow
// the MTP layer's own output before shared_head.norm, never normed twice.
#include "engine_fixture.h"
#include "test_drafters.h"

#include <glmrt/generate/generator.h>
#include <glmrt/generate/speculator.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <algorithm>

namespace glmrt {
namespace {

using test_support::kTinyModel;
using test_support::open_tiny_engine;
using test_support::reference_profile;

int32_t best_token(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::unique_ptr<Engine> mtp_engine(int max_drafts) {
  Profile profile = reference_profile();
  profile.draft = PluginChoice{"draft-mtp", {{"p_min", "0"}}, {}};
  profile.max_draft_tokens = max_drafts;
  profile.draft_adaptive = false;
  return open_tiny_engine(profile);
}

/// Decodes the case's sequence step by step from its first `start` tokens,
/// calling `check(L, drafts)` with the session's length before each step and
/// the drafts proposed for it. Teacher-forced: each step verifies one token of
/// the sequence (whatever the drafts); else greedy, taking accepted drafts
/// (greedy follows the oracle's sequence past the prompt).
void decode_steps(Engine& engine, const OracleCase& c, size_t start, bool teacher_forced,
                  const std::function<void(int64_t, std::span<const int32_t>)>& check) {
  Session session(engine);
  Speculator& speculator = *session.speculator();
  Sampler sampler(test_support::greedy_sampling());
  const std::vector<int32_t>& full = c.full_ids;
  std::vector<int32_t> context(full.begin(), full.begin() + start), answer;
  int32_t token = best_token(session.set_context(context));
  if (teacher_forced) token = full[start];
  while (session.tokens().size() < full.size()) {
    const int64_t length = static_cast<int64_t>(session.tokens().size());
    ASSERT_EQ(token, full[length]) << "greedy left the oracle's sequence";
    context.push_back(token);
    answer.push_back(token);
    const SpeculativeStep step =
        speculator.step(token, sampler, context, answer, teacher_forced ? 1 : 100);
    check(length, speculator.last_proposal());
    if (teacher_forced) {
      token = length + 1 < static_cast<int64_t>(full.size()) ? full[length + 1] : -1;
      continue;
    }
    for (int32_t t : step.accepted) context.push_back(t), answer.push_back(t);
    token = step.next;
  }
}

TEST(MtpDraft, FirstDraftsAreTheOraclesMtpPredictions) {
  const auto cases = load_oracle(kTinyModel / "ref.json");
  for (int max_drafts : {1, 3}) {
    auto engine = mtp_engine(max_drafts);
    int64_t checked = 0, agree = 0;
    for (const OracleCase& c : cases) {
      // Teacher-forced from one token (every row the drafter's own), and
      // greedy from the prompt (its rows absorbed during prefill; drafted
      // rows kept or dropped as verification accepts or rejects).
      for (size_t start : {size_t{1}, c.prompt_ids.size()}) {
        const bool teacher_forced = start < c.prompt_ids.size();
        decode_steps(*engine, c, start, teacher_forced,
                     [&](int64_t length, std::span<const int32_t> drafts) {
                       const int64_t row = length - 1;
                       ASSERT_FALSE(drafts.empty());
                       if (c.mtp_margin[row] <= 1e-3) return;
                       ++checked;
                       agree += drafts[0] == c.mtp_pred[row];
                       EXPECT_EQ(drafts[0], c.mtp_pred[row]) << c.name << " row " << row;
                     });
      }
    }
    EXPECT_GT(checked, 60);
    EXPECT_EQ(agree, checked) << max_drafts << " drafts";
  }
}

TEST(MtpDraft, AbsorbedPairsLeaveTheRowsOfAFullRunAndReadNoExpert) {
  const auto cases = load_oracle(kTinyModel / "ref.json");
  auto engine = mtp_engine(1);
  Model& model = engine->model();
  const int64_t D = model.config().hidden_size;
  const int layer = model.mtp_layer();
  for (const OracleCase& c : cases) {
    const std::vector<int32_t>& prompt = c.full_ids;
    const int64_t L = static_cast<int64_t>(prompt.size());
    KvCache full = engine->new_cache(), absorbed = engine->new_cache();
    const std::vector<float> normed = model.final_norm(model.forward(full, prompt), L);
    model.forward(absorbed, prompt);
    const auto pairs = std::span(prompt).subspan(1);
    const auto states = std::span(normed).first((L - 1) * D);
    model.mtp_forward(full, pairs, states);
    const ExpertStoreStats before = engine->experts().stats();
    model.mtp_absorb(absorbed, pairs, states);
    EXPECT_EQ(engine->experts().stats().hits, before.hits) << "absorbing routes no expert";
    EXPECT_EQ(engine->experts().stats().misses, before.misses);
    ASSERT_EQ(absorbed.length(layer), full.length(layer));
    const auto same_rows = [&](const CacheRows& a, const CacheRows& b) {
      std::vector<float> ra(a.width), rb(b.width);
      for (int64_t t = 0; t < L - 1; ++t) {
        a.load(t, ra), b.load(t, rb);
        ASSERT_EQ(ra, rb) << c.name << " row " << t;
      }
    };
    same_rows(absorbed.kv_rows(layer), full.kv_rows(layer));
    if (model.config().indexer_kind(layer) == IndexerKind::full)
      same_rows(absorbed.index_key_rows(layer), full.index_key_rows(layer));
  }
}

TEST(MtpDraft, ChainedDraftsFollowTheMtpOutputBeforeItsHeadNorm) {
  const auto cases = load_oracle(kTinyModel / "ref.json");
  auto engine = mtp_engine(3);
  Model& model = engine->model();
  const int64_t D = model.config().hidden_size;
  for (const OracleCase& c : cases) {
    const std::vector<int32_t>& prompt = c.prompt_ids;
    const int64_t L = static_cast<int64_t>(prompt.size());
    // By hand: main forward, the prompt's MTP pairs, then three chained rows.
    KvCache cache = engine->new_cache();
    const std::vector<float> normed = model.final_norm(model.forward(cache, prompt), L);
    const int32_t x = best_token(model.head(std::span(normed).last(D), 1));
    if (L > 1)
      model.mtp_forward(cache, std::span(prompt).subspan(1), std::span(normed).first((L - 1) * D));
    std::vector<float> h(normed.end() - D, normed.end());
    std::vector<int32_t> want;
    int32_t token = x;
    for (int i = 0; i < 3; ++i) {
      h = model.mtp_forward(cache, std::span(&token, 1), h);
      token = best_token(model.mtp_logits(h, 1));
      want.push_back(token);
    }
    // Through the session and the plugin.
    Session session(*engine);
    Sampler sampler(test_support::greedy_sampling());
    ASSERT_EQ(best_token(session.set_context(prompt)), x);
    std::vector<int32_t> context = prompt;
    context.push_back(x);
    session.speculator()->step(x, sampler, context, std::vector<int32_t>{x}, 100);
    const auto drafts = session.speculator()->last_proposal();
    EXPECT_EQ(std::vector<int32_t>(drafts.begin(), drafts.end()), want) << c.name;
  }
}

}  // namespace
}  // namespace glmrt
