// A rule over which tokens an answer may continue with (constrained
// decoding, e.g. JSON output). The sampler asks it before each draw and
// leaves the other tokens out (their logits become -inf right after
// logit_bias, before temperature, top-k, top-p and min-p), so the allowed
// tokens keep their relative probabilities. Speculative verification draws
// from the same distribution, so drafted tokens are checked under it too.
#pragma once

#include <cstdint>
#include <span>

namespace glmrt {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  /// One flag per vocabulary token (1 = may come next) after `generated`,
  /// the answer so far. Valid until the next call. Calls may go back to an
  /// earlier answer (rejected drafts): the answer alone decides the result.
  virtual std::span<const uint8_t> allowed(std::span<const int32_t> generated) = 0;
  /// Whether `generated` is finished: nothing but a stop token may follow,
  /// so generation ends after it as if a stop token had been drawn.
  virtual bool complete(std::span<const int32_t> generated) = 0;
};

}  // namespace glmrt
