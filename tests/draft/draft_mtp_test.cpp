// draft-mtp against a scripted host: how it calls the MTP layer (first row
// n-2 with the history's last token and last_hidden(), chained rows on the
// previous output), what it proposes (argmax and one-hot q when greedy; q
// shaped by temperature, top-k, top-p and min-p when sampling, the draft
// drawn with the host's uniform), the host's penalties (the frequency
// penalty only when the request carries it), where p_min stops it, and that
// a failing host call fails the proposal with the host's message.
#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <numeric>
#include <string>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

constexpr int32_t kVocab = 8;
constexpr int32_t kHidden = 2;

/// An MTP layer whose logits are scripted per call; records the calls.
class ScriptedMtp final : public plugin::DraftHost {
 public:
  struct Call {
    int32_t token;
    int64_t position;
    std::vector<float> h;
  };
  std::vector<std::vector<float>> logits_per_call;  // used in order, the last repeated
  std::vector<Call> calls;
  bool fail_calls = false;

  int32_t vocab_size() const noexcept override { return kVocab; }
  int32_t hidden_size() const noexcept override { return kHidden; }
  bool has_mtp() const noexcept override { return true; }
  glmrt_status last_hidden(float* out) noexcept override {
    out[0] = 0.25f, out[1] = -0.5f;
    return GLMRT_OK;
  }
  glmrt_status run_mtp(int32_t token, int64_t position, const float* h, float* h_out,
                       float* logits) noexcept override {
    if (fail_calls) return GLMRT_ERR_IO;
    calls.push_back({token, position, {h, h + kHidden}});
    h_out[0] = static_cast<float>(calls.size()), h_out[1] = static_cast<float>(token);
    const auto& row = logits_per_call[std::min(calls.size(), logits_per_call.size()) - 1];
    std::copy(row.begin(), row.end(), logits);
    return GLMRT_OK;
  }
  const char* last_error() const noexcept override {
    return "expert 3 of layer 4: read failed at offset 77";
  }
};

class DraftMtpTest : public ::testing::Test {
 protected:
  PluginHandle<plugin::Draft> create(std::map<std::string, std::string> settings = {}) {
    return host_.create_draft({"draft-mtp", std::move(settings), {}}, services_);
  }

  struct Result {
    glmrt_status status;
    std::vector<int32_t> tokens;
    std::vector<std::vector<std::pair<int32_t, float>>> q;  // empty = one-hot
  };
  Result propose(plugin::Draft& draft, const std::vector<int32_t>& history, int max_tokens,
                 float temperature, int top_k = 0, float top_p = 1.f, float min_p = 0.f,
                 double uniform = 0.5, float repetition = 1.f, float presence = 0.f,
                 int64_t n_answer = 0, float frequency = 0.f,
                 uint32_t struct_size = sizeof(glmrt_draft_request)) {
    std::vector<int32_t> tokens(max_tokens), sizes(max_tokens), ids(max_tokens * kVocab);
    std::vector<float> probs(max_tokens * kVocab);
    std::vector<double> uniforms(max_tokens, uniform);
    // Every field, frequency_penalty too when struct_size stops before it:
    // the plugin must not read it then.
    glmrt_draft_request request{
        struct_size,     max_tokens, history.data(), static_cast<int64_t>(history.size()),
        temperature,     top_k,      top_p,          min_p,
        uniforms.data(), repetition, presence,       n_answer,
        frequency};
    glmrt_draft_proposal proposal{sizeof(glmrt_draft_proposal),
                                  max_tokens,
                                  kVocab,
                                  0,
                                  tokens.data(),
                                  sizes.data(),
                                  ids.data(),
                                  probs.data()};
    Result r;
    r.status = draft.propose(model_, &request, &proposal);
    for (int i = 0; i < proposal.n_tokens; ++i) {
      r.tokens.push_back(tokens[i]);
      r.q.emplace_back();
      for (int e = 0; e < sizes[i]; ++e)
        r.q.back().emplace_back(ids[i * kVocab + e], probs[i * kVocab + e]);
    }
    return r;
  }

  PluginHost host_{std::vector<fs::path>{fs::path(GLMRT_BUILD_DIR) / "plugins"}};
  MemoryBudget budget_;
  HostServices services_{budget_, 1};
  ScriptedMtp model_;
};

TEST_F(DraftMtpTest, GreedyChainsOnTheMtpOutputFromTheLastRow) {
  auto draft = create();
  EXPECT_EQ(draft->requirements(), GLMRT_DRAFT_NEEDS_MTP);
  model_.logits_per_call = {
      {0, 0, 5, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 7, 0}, {1, 0, 0, 0, 0, 0, 0, 0}};
  const Result r = propose(*draft, {4, 4, 1, 3}, 3, 0.f);
  ASSERT_EQ(r.status, GLMRT_OK);
  EXPECT_EQ(r.tokens, (std::vector<int32_t>{2, 6, 0}));
  for (const auto& q : r.q) EXPECT_TRUE(q.empty()) << "greedy drafts are one-hot";
  ASSERT_EQ(model_.calls.size(), 3u);
  // Row n-2 = 2 with the history's last token and last_hidden().
  EXPECT_EQ(model_.calls[0].token, 3);
  EXPECT_EQ(model_.calls[0].position, 2);
  EXPECT_EQ(model_.calls[0].h, (std::vector<float>{0.25f, -0.5f}));
  // Then each draft with the previous call's output.
  EXPECT_EQ(model_.calls[1].token, 2);
  EXPECT_EQ(model_.calls[1].position, 3);
  EXPECT_EQ(model_.calls[1].h, (std::vector<float>{1.f, 3.f}));
  EXPECT_EQ(model_.calls[2].token, 6);
  EXPECT_EQ(model_.calls[2].position, 4);
  EXPECT_EQ(model_.calls[2].h, (std::vector<float>{2.f, 2.f}));
}

TEST_F(DraftMtpTest, NothingToDraftFromBeforeTheFirstPosition) {
  auto draft = create();
  model_.logits_per_call = {std::vector<float>(kVocab, 0.f)};
  const Result r = propose(*draft, {9}, 3, 0.f);
  EXPECT_EQ(r.status, GLMRT_OK);
  EXPECT_TRUE(r.tokens.empty());
  EXPECT_TRUE(model_.calls.empty());
}

TEST_F(DraftMtpTest, SampledDraftsComeWithTheShapedSoftmaxTheyWereDrawnFrom) {
  auto draft = create();
  const std::vector<float> logits = {2.0f, 1.0f, 0.5f, 3.0f, -1.0f, 0.0f, 1.5f, -2.0f};
  model_.logits_per_call = {logits};
  const float temperature = 0.8f;
  const Result r = propose(*draft, {1, 2}, 1, temperature, /*top_k=*/4, /*top_p=*/1.f,
                           /*min_p=*/0.f, /*uniform=*/0.99);
  ASSERT_EQ(r.status, GLMRT_OK);
  ASSERT_EQ(r.q.size(), 1u);
  const auto& q = r.q[0];
  // top-4 by logit: 3, 0, 6, 1 — most probable first, softmax at temperature.
  ASSERT_EQ(q.size(), 4u);
  const std::vector<int32_t> order = {3, 0, 6, 1};
  double z = 0;
  for (int32_t t : order) z += std::exp((logits[t] - 3.0) / temperature);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(q[i].first, order[i]);
    EXPECT_NEAR(q[i].second, std::exp((logits[order[i]] - 3.0) / temperature) / z, 1e-6);
  }
  EXPECT_EQ(r.tokens[0], 1) << "uniform 0.99 draws the last entry";
  // top-p keeps the smallest prefix reaching it; min-p drops entries under
  // min_p x the best.
  const Result nucleus = propose(*draft, {1, 2}, 1, 1.f, 0, 0.5f);
  EXPECT_EQ(nucleus.q[0].size(), 1u);
  const Result floor = propose(*draft, {1, 2}, 1, 1.f, 0, 1.f, 0.3f);
  for (const auto& [id, p] : floor.q[0]) EXPECT_GE(logits[id], 3.0f + std::log(0.3f) - 1e-5);
  double total = 0;
  for (const auto& e : floor.q[0]) total += e.second;
  EXPECT_NEAR(total, 1.0, 1e-6);
}

TEST_F(DraftMtpTest, GreedyDraftsFollowTheHostsPenalties) {
  auto draft = create();
  // Token 2 leads by a little, token 5 is next: a penalised 2 falls behind 5.
  std::vector<float> logits(kVocab, 0.f);
  logits[2] = 3.0f, logits[5] = 2.5f;
  model_.logits_per_call = {logits};
  EXPECT_EQ(propose(*draft, {1, 4}, 2, 0.f).tokens, (std::vector<int32_t>{2, 2}));
  // Repetition penalty 1.5: 2 in the history gives 2.0 < 2.5; then 5 is drafted
  // and penalised in turn (1.67), so 2 comes back.
  EXPECT_EQ(propose(*draft, {2, 4}, 3, 0.f, 0, 1.f, 0.f, 0.5, 1.5f).tokens,
            (std::vector<int32_t>{5, 2, 2}));
  // Presence penalty 1 on the answer only: 2 in the prompt part is not hit...
  EXPECT_EQ(propose(*draft, {2, 4}, 1, 0.f, 0, 1.f, 0.f, 0.5, 1.f, 1.f, 1).tokens,
            (std::vector<int32_t>{2}));
  // ...2 in the answer is (2.0 < 2.5), and a drafted 5 then is too (1.5 < 2.0);
  // a penalty counts each distinct token once.
  EXPECT_EQ(propose(*draft, {2, 4}, 3, 0.f, 0, 1.f, 0.f, 0.5, 1.f, 1.f, 2).tokens,
            (std::vector<int32_t>{5, 2, 2}));
  // Sampled: q is the penalised softmax.
  const Result sampled = propose(*draft, {2, 4}, 1, 1.f, 2, 1.f, 0.f, 0.5, 1.5f);
  ASSERT_EQ(sampled.q.size(), 1u);
  ASSERT_EQ(sampled.q[0].size(), 2u);
  EXPECT_EQ(sampled.q[0][0].first, 5);
  EXPECT_NEAR(sampled.q[0][0].second, 1.0 / (1.0 + std::exp(2.0 - 2.5)), 1e-6);
  // A zeroed repetition penalty is off, not a division by zero.
  EXPECT_EQ(propose(*draft, {2, 4}, 1, 0.f, 0, 1.f, 0.f, 0.5, 0.f).tokens,
            (std::vector<int32_t>{2}));
}

TEST_F(DraftMtpTest, GreedyDraftsFollowTheHostsFrequencyPenalty) {
  auto draft = create();
  std::vector<float> logits(kVocab, 0.f);
  logits[2] = 3.0f, logits[5] = 2.5f;
  model_.logits_per_call = {logits};
  // 0.3 per occurrence in the answer {2, 2, 4}: 2 is at 2.4 < 2.5, so 5 is
  // drafted; 5 then falls to 2.2 < 2.4, so 2; 2 to 2.1 < 2.2, so 5; 5 to 1.9.
  EXPECT_EQ(propose(*draft, {2, 2, 4}, 4, 0.f, 0, 1.f, 0.f, 0.5, 1.f, 0.f, 3, 0.3f).tokens,
            (std::vector<int32_t>{5, 2, 5, 2}));
  // Prompt tokens are not counted: 2 only in the prompt part keeps its lead.
  EXPECT_EQ(propose(*draft, {2, 2, 4}, 1, 0.f, 0, 1.f, 0.f, 0.5, 1.f, 0.f, 1, 0.3f).tokens,
            (std::vector<int32_t>{2}));
  // A request from a host that predates the field (its struct_size stops
  // before it) drafts unpenalised, whatever lies beyond.
  const uint32_t older = offsetof(glmrt_draft_request, frequency_penalty);
  EXPECT_EQ(propose(*draft, {2, 2, 4}, 2, 0.f, 0, 1.f, 0.f, 0.5, 1.f, 0.f, 3, 0.3f, older).tokens,
            (std::vector<int32_t>{2, 2}));
}

TEST_F(DraftMtpTest, PMinStopsAtTheFirstUnsureDraft) {
  auto draft = create({{"p_min", "0.6"}});
  // Sure (one logit far above), sure, then unsure (flat).
  std::vector<float> sure(kVocab, 0.f), flat(kVocab, 0.f);
  sure[5] = 10.f;
  model_.logits_per_call = {sure, sure, flat};
  const Result r = propose(*draft, {1, 2, 3}, 4, 0.f);
  EXPECT_EQ(r.tokens, (std::vector<int32_t>{5, 5}));
  EXPECT_EQ(model_.calls.size(), 3u);  // the unsure draft was computed, not proposed
  for (const char* bad : {"-0.1", "1.5", "x", ""}) {
    try {
      create({{"p_min", bad}});
      ADD_FAILURE() << "p_min " << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("`p_min`"), std::string::npos) << e.what();
    }
  }
}

TEST_F(DraftMtpTest, AFailingHostCallFailsTheProposalWithTheHostsMessage) {
  auto draft = create();
  model_.fail_calls = true;
  const Result r = propose(*draft, {1, 2, 3}, 2, 0.f);
  EXPECT_NE(r.status, GLMRT_OK);
  EXPECT_NE(std::string(draft->last_error()).find("read failed at offset 77"), std::string::npos)
      << draft->last_error();
}

}  // namespace
}  // namespace glmrt
