#include <glmrt/base/error.h>
#include <glmrt/draft/draft_proposal.h>

#include <algorithm>
#include <cmath>

namespace glmrt {
namespace {

// How far a drafter's q may sum from 1 before it is refused (float rounding
// over a dense vocabulary stays far below this).
constexpr double kSumTolerance = 1e-3;

}  // namespace

DraftProposal::DraftProposal(int32_t vocab_size, int max_tokens)
    : vocab_(vocab_size),
      max_tokens_(max_tokens),
      tokens_(max_tokens),
      q_size_(max_tokens),
      q_tokens_(static_cast<size_t>(max_tokens) * vocab_size),
      q_probs_(static_cast<size_t>(max_tokens) * vocab_size),
      uniforms_(max_tokens),
      seen_(vocab_size, 0) {
  if (max_tokens < 1) fail("draft proposal: room for {} drafts (expected at least 1)", max_tokens);
}

glmrt_draft_request DraftProposal::request(std::span<const int32_t> history, int max_tokens,
                                           const SamplingParams& sampling, std::mt19937_64& rng,
                                           int64_t n_answer) {
  if (max_tokens < 1 || max_tokens > max_tokens_)
    fail("draft request for {} drafts (room for 1..{})", max_tokens, max_tokens_);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int i = 0; i < max_tokens; ++i) uniforms_[i] = uniform(rng);
  proposal_ = {};
  proposal_.struct_size = sizeof(glmrt_draft_proposal);
  proposal_.max_tokens = max_tokens;
  proposal_.q_capacity = vocab_;
  proposal_.tokens = tokens_.data();
  proposal_.q_size = q_size_.data();
  proposal_.q_tokens = q_tokens_.data();
  proposal_.q_probs = q_probs_.data();
  glmrt_draft_request r{};
  r.struct_size = sizeof(glmrt_draft_request);
  r.max_tokens = max_tokens;
  r.history = history.data();
  r.n_history = static_cast<int64_t>(history.size());
  r.temperature = static_cast<float>(sampling.temperature);
  r.top_k = sampling.top_k;
  r.top_p = static_cast<float>(sampling.top_p);
  r.min_p = static_cast<float>(sampling.min_p);
  r.uniforms = uniforms_.data();
  r.repetition_penalty = static_cast<float>(sampling.repetition_penalty);
  r.presence_penalty = static_cast<float>(sampling.presence_penalty);
  r.frequency_penalty = static_cast<float>(sampling.frequency_penalty);
  r.n_answer = std::clamp<int64_t>(n_answer, 0, r.n_history);
  return r;
}

int DraftProposal::check(const std::string& drafter) {
  const int n = proposal_.n_tokens;
  if (n < 0 || n > proposal_.max_tokens)
    fail("draft plugin `{}` proposed {} drafts (asked for at most {})", drafter, n,
         proposal_.max_tokens);
  for (int i = 0; i < n; ++i) {
    const int32_t token = tokens_[i];
    if (token < 0 || token >= vocab_)
      fail("draft plugin `{}`: draft {} is token {}, outside the vocabulary (0..{})", drafter, i,
           token, vocab_ - 1);
    const int32_t size = q_size_[i];
    if (size < 0 || size > vocab_)
      fail("draft plugin `{}`: draft {} has a q of {} entries (0..{})", drafter, i, size, vocab_);
    if (size == 0) continue;  // one-hot
    int32_t* ids = q_tokens_.data() + static_cast<size_t>(i) * vocab_;
    float* probs = q_probs_.data() + static_cast<size_t>(i) * vocab_;
    ++check_id_;
    double sum = 0.0, q_token = 0.0;
    for (int32_t e = 0; e < size; ++e) {
      if (ids[e] < 0 || ids[e] >= vocab_)
        fail("draft plugin `{}`: draft {}'s q names token {}, outside the vocabulary", drafter, i,
             ids[e]);
      if (seen_[ids[e]] == check_id_)
        fail("draft plugin `{}`: draft {}'s q lists token {} twice", drafter, i, ids[e]);
      seen_[ids[e]] = check_id_;
      if (!std::isfinite(probs[e]) || probs[e] < 0.f)
        fail("draft plugin `{}`: draft {}'s q({}) = {} (expected a finite probability >= 0)",
             drafter, i, ids[e], probs[e]);
      sum += probs[e];
      if (ids[e] == token) q_token = probs[e];
    }
    if (std::fabs(sum - 1.0) > kSumTolerance)
      fail("draft plugin `{}`: draft {}'s q sums to {} (expected 1)", drafter, i, sum);
    if (q_token <= 0.0)
      fail("draft plugin `{}`: draft {} is token {}, which its own q gives probability 0", drafter,
           i, token);
    for (int32_t e = 0; e < size; ++e) probs[e] = static_cast<float>(probs[e] / sum);
  }
  return n;
}

DraftDistribution DraftProposal::distribution(int i) const {
  const size_t offset = static_cast<size_t>(i) * vocab_;
  const size_t size = static_cast<size_t>(q_size_[i]);
  return {tokens_[i], {q_tokens_.data() + offset, size}, {q_probs_.data() + offset, size}};
}

}  // namespace glmrt
