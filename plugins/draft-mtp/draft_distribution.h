// The distribution q an MTP draft is drawn from: the MTP head's softmax
// shaped by the host's sampling settings the way the host shapes p
// (temperature, then top-k, top-p and min-p, as glmrt's Sampler does;
// the host's repetition, presence and frequency penalties first, when it
// sends them),
// so that q stays close to p and drafts are accepted often.
#pragma once

#include <glmrt/plugin/draft.h>

#include <cstdint>

namespace glmrt::draft_mtp {

/// The host's penalties as the request carries them; a field the request
/// does not cover (an older host's struct_size) or a zeroed one is off.
struct Penalties {
  float repetition = 1.0f;
  float presence = 0.0f;
  float frequency = 0.0f;
  static Penalties of(const glmrt_draft_request& request) noexcept;
  bool repetition_on() const noexcept { return repetition > 0.0f && repetition != 1.0f; }
  bool any() const noexcept { return repetition_on() || presence != 0.0f || frequency != 0.0f; }
};

/// What the penalties count per token (vocab entries each): whether it is in
/// the history (or an earlier draft), how often it is in the answer.
struct TokenCounts {
  uint8_t* seen;
  int32_t* in_answer;
  /// One more occurrence of `token` (a draft): history and answer alike.
  void add(int32_t token) const noexcept {
    seen[token] = 1;
    ++in_answer[token];
  }
};

/// The host sampler's penalties on `logits`: divides (positive) or multiplies
/// (negative) the logit of every seen token by `repetition`, then subtracts
/// `presence` from every token in the answer and `frequency` once per time
/// it is there.
void apply_penalties(float* logits, int32_t vocab, TokenCounts counts,
                     const Penalties& penalties) noexcept;

/// Counts the request's history (seen) and its last n_answer tokens
/// (in_answer), both cleared first.
void count_history(const glmrt_draft_request& request, int32_t vocab, TokenCounts counts) noexcept;

/// Probability of the most likely token of softmax(logits) (temperature 1):
/// the draft's confidence, held against p_min.
float top_probability(const float* logits, int32_t vocab) noexcept;

/// The first index of the largest logit (as torch.argmax).
int32_t argmax(const float* logits, int32_t vocab) noexcept;

/// Writes q's entries, most probable first (ties by id), to ids/probs and
/// returns their count. `order` is scratch of `vocab` ids.
int32_t shape_distribution(const float* logits, int32_t vocab, const glmrt_draft_request& request,
                           int32_t* order, int32_t* ids, float* probs) noexcept;

/// The entry that inverse-CDF sampling with `u` in [0, 1) picks.
int32_t draw(const float* probs, int32_t count, double u) noexcept;

}  // namespace glmrt::draft_mtp
