// The host-owned arrays of one draft request and its proposal, and the check
// of what a drafter wrote into them before anything relies on it.
#pragma once

#include <glmrt/draft/rejection_sampling.h>
#include <glmrt/plugin/draft.h>
#include <glmrt/sampling/sampler.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace glmrt {

class DraftProposal {
 public:
  /// Room for up to `max_tokens` drafts, each with a q over `vocab_size`
  /// tokens (a dense q fits).
  DraftProposal(int32_t vocab_size, int max_tokens);

  /// A request for up to `max_tokens` drafts continuing `history`, sampled
  /// like `sampling` (penalties included; the history's last `n_answer`
  /// tokens are the answer so far), with fresh uniforms from `rng`; resets the
  /// proposal. The request points into this object and `history`.
  glmrt_draft_request request(std::span<const int32_t> history, int max_tokens,
                              const SamplingParams& sampling, std::mt19937_64& rng,
                              int64_t n_answer = 0);
  glmrt_draft_proposal* proposal() { return &proposal_; }

  /// Checks the proposal against the contract (draft.h) and normalises each
  /// q to sum to exactly 1; throws glmrt::Error naming `drafter` and what is
  /// wrong. Returns the number of drafts.
  int check(const std::string& drafter);

  /// No drafts (until the next request()).
  void clear() { proposal_.n_tokens = 0; }
  int size() const { return proposal_.n_tokens; }
  std::span<const int32_t> tokens() const {
    return {tokens_.data(), static_cast<size_t>(proposal_.n_tokens)};
  }
  /// Draft i and the q it was drawn from (valid until the next request()).
  DraftDistribution distribution(int i) const;

 private:
  int32_t vocab_;
  int max_tokens_;
  std::vector<int32_t> tokens_, q_size_, q_tokens_;
  std::vector<float> q_probs_;
  std::vector<double> uniforms_;
  std::vector<uint32_t> seen_;  // per vocabulary id: the check that last saw it
  uint32_t check_id_ = 0;
  glmrt_draft_proposal proposal_{};
};

}  // namespace glmrt
