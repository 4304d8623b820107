// Verification of one draft that keeps the output distribution exactly the
// model's (speculative sampling, Leviathan et al. 2023 / Chen et al. 2023):
// accept the draft d with probability min(1, p(d) / q(d)); on rejection draw
// from the normalised max(0, p - q). For a greedy p (one token, probability
// 1) this accepts exactly the argmax and otherwise returns it.
#pragma once

#include <glmrt/sampling/sampler.h>

#include <cstdint>
#include <functional>
#include <span>

namespace glmrt {

/// The distribution q a draft was drawn from.
struct DraftDistribution {
  int32_t token = -1;            // the draft
  std::span<const int32_t> ids;  // q's non-zero entries; empty = one-hot on `token`
  std::span<const float> probs;  // their probabilities (summing to 1)
  /// q(t).
  double at(int32_t t) const;
};

struct DraftVerdict {
  bool accepted = false;
  int32_t token = -1;  // the draft when accepted, else the token drawn in its place
};

/// Verifies `q.token` against p (Sampler::distribution at this position).
/// `uniform` yields draws in [0, 1); it is called only when the outcome is
/// not already certain (p(d) >= q(d) accepts, p(d) = 0 rejects, a residual of
/// one token is that token), so greedy decoding never draws.
DraftVerdict verify_draft(std::span<const TokenProbability> p, const DraftDistribution& q,
                          const std::function<double()>& uniform);

}  // namespace glmrt
