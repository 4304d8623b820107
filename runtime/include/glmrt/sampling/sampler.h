// Turns logits into the next token: penalties, temperature, top-k, top-p,
// min-p, then a seeded draw (or argmax when temperature is 0).
#pragma once

#include <glmrt/base/error.h>
#include <glmrt/profile/profile.h>
#include <glmrt/sampling/token_constraint.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace glmrt {

struct SamplingParams {
  double temperature = 1.0;  // 0 = greedy
  int top_k = 0;             // 0 = off
  double top_p = 1.0;        // 1 = off
  double min_p = 0.0;        // 0 = off
  double repetition_penalty =
      1.0;                        // HF: divides positive logits of seen tokens, multiplies negative
  double presence_penalty = 0.0;  // OpenAI: subtracted once from every generated token's logit
  double frequency_penalty = 0.0;  // OpenAI: subtracted once per time a token was generated
  uint64_t seed = 0;
  int max_new_tokens = 256;
  // Added to a token's logit after the penalties (OpenAI's logit_bias);
  // -100 or less bans it.
  std::vector<std::pair<int32_t, double>> logit_bias;
};

/// Defaults from the model's generation_config.json (when present), then the
/// profile's `generation:` section on top. Errors name the file and key.
SamplingParams resolve_sampling(const std::filesystem::path& model_dir, const Profile& profile);

/// Logits whose best value is not finite (NaN or infinite): the model's
/// output cannot be sampled. `validate` counts these as non-finite rows.
class NonFiniteLogits : public Error {
 public:
  using Error::Error;
};

/// logit_bias bans every token the constraint (an output format) allows
/// next: it is the request that cannot be satisfied, not the model.
class UnsatisfiableConstraint : public Error {
 public:
  using Error::Error;
};

/// A token and its probability after every filter.
struct TokenProbability {
  int32_t token;
  double probability;
};

class Sampler {
 public:
  /// `constraint` (optional) decides which tokens may come next; the
  /// sampler shares it (its caches change as answers are asked about).
  explicit Sampler(SamplingParams params, std::shared_ptr<TokenConstraint> constraint = nullptr);

  /// context: every token so far (for the repetition penalty); generated: the
  /// tokens this answer produced (for the presence and frequency penalties).
  int32_t sample(std::span<const float> logits, std::span<const int32_t> context,
                 std::span<const int32_t> generated);

  /// The distribution sample() draws from, most probable first (a single token
  /// with probability 1 when greedy). With a constraint, only the tokens it
  /// allows after `generated`.
  std::vector<TokenProbability> distribution(std::span<const float> logits,
                                             std::span<const int32_t> context,
                                             std::span<const int32_t> generated) const;

  /// A uniform draw in [0, 1) from this sampler's seeded generator (what
  /// speculative verification accepts and resamples with).
  double uniform();

  const SamplingParams& params() const { return params_; }

  /// Whether the constraint (if any) says `generated` is finished.
  bool finished(std::span<const int32_t> generated) const {
    return constraint_ && constraint_->complete(generated);
  }

 private:
  SamplingParams params_;
  std::shared_ptr<TokenConstraint> constraint_;
  std::mt19937_64 rng_;
};

}  // namespace glmrt
