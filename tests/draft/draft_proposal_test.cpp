// The host checks what a drafter wrote before anything relies on it: counts,
// token ids, and that each q is a distribution containing its draft.
#include <glmrt/base/error.h>
#include <glmrt/draft/draft_proposal.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace glmrt {
namespace {

constexpr int32_t kVocab = 10;

class ProposalTest : public ::testing::Test {
 protected:
  glmrt_draft_proposal& start(int max_tokens = 3) {
    request_ = proposal_.request(history_, max_tokens, SamplingParams{}, rng_);
    return *proposal_.proposal();
  }
  /// Draft i = token with q over ids/probs.
  void set(int i, int32_t token, std::vector<int32_t> ids, std::vector<float> probs) {
    glmrt_draft_proposal& p = *proposal_.proposal();
    p.tokens[i] = token;
    p.q_size[i] = static_cast<int32_t>(ids.size());
    for (size_t e = 0; e < ids.size(); ++e) {
      p.q_tokens[i * p.q_capacity + e] = ids[e];
      p.q_probs[i * p.q_capacity + e] = probs[e];
    }
  }
  std::string error() {
    try {
      proposal_.check("test-drafter");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  DraftProposal proposal_{kVocab, 4};
  std::vector<int32_t> history_{1, 2, 3};
  std::mt19937_64 rng_{3};
  glmrt_draft_request request_{};
};

TEST_F(ProposalTest, RequestCarriesHistorySamplingAndUniforms) {
  SamplingParams sampling;
  sampling.temperature = 0.5;
  sampling.top_k = 7;
  sampling.presence_penalty = 0.25;
  sampling.frequency_penalty = -0.75;
  const glmrt_draft_request r = proposal_.request(history_, 2, sampling, rng_);
  EXPECT_EQ(r.n_history, 3);
  EXPECT_EQ(r.history, history_.data());
  EXPECT_EQ(r.max_tokens, 2);
  EXPECT_FLOAT_EQ(r.temperature, 0.5f);
  EXPECT_EQ(r.top_k, 7);
  EXPECT_FLOAT_EQ(r.presence_penalty, 0.25f);
  ASSERT_TRUE(GLMRT_DRAFT_REQUEST_HAS_FREQUENCY_PENALTY(&r));
  EXPECT_FLOAT_EQ(r.frequency_penalty, -0.75f);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(r.uniforms[i] >= 0.0 && r.uniforms[i] < 1.0);
  EXPECT_EQ(proposal_.proposal()->q_capacity, kVocab);
  EXPECT_THROW(proposal_.request(history_, 5, sampling, rng_), Error);
}

TEST_F(ProposalTest, OneHotAndDenseDraftsPassAndQIsNormalised) {
  glmrt_draft_proposal& p = start();
  p.n_tokens = 2;
  set(0, 4, {}, {});
  set(1, 6, {6, 2, 9}, {0.5f, 0.3f, 0.2004f});
  EXPECT_EQ(error(), "");
  EXPECT_EQ(proposal_.size(), 2);
  const DraftDistribution q = proposal_.distribution(1);
  EXPECT_EQ(q.token, 6);
  double sum = 0;
  for (float x : q.probs) sum += x;
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_EQ(proposal_.distribution(0).at(4), 1.0);
}

TEST_F(ProposalTest, BrokenProposalsAreRefusedNamingTheDrafter) {
  const auto refused = [&](auto edit, const std::string& what) {
    glmrt_draft_proposal& p = start();
    p.n_tokens = 1;
    set(0, 4, {4, 5}, {0.5f, 0.5f});
    edit(p);
    const std::string e = error();
    EXPECT_NE(e.find("test-drafter"), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  refused([](auto& p) { p.n_tokens = 4; }, "proposed 4 drafts");
  refused([](auto& p) { p.n_tokens = -1; }, "proposed -1 drafts");
  refused([](auto& p) { p.tokens[0] = kVocab; }, "outside the vocabulary");
  refused([](auto& p) { p.q_size[0] = kVocab + 1; }, "entries");
  refused([](auto& p) { p.q_tokens[1] = 4; }, "twice");
  refused([](auto& p) { p.q_tokens[1] = -2; }, "outside the vocabulary");
  refused([](auto& p) { p.q_probs[1] = 0.1f; }, "sums to");
  refused([](auto& p) { p.q_probs[1] = std::numeric_limits<float>::quiet_NaN(); }, "finite");
  refused([](auto& p) { p.q_probs[0] = -0.5f, p.q_probs[1] = 1.5f; }, "finite probability >= 0");
  refused([](auto& p) { p.tokens[0] = 7; }, "probability 0");
}

}  // namespace
}  // namespace glmrt
