// The distribution q an MTP draft is drawn from: the MTP head's softmax
// shaped by the host's sampling settings the way the host shapes p
// (temperature, then top-k, top-p and min-p, as glmrt's Sampler does;
// the host's repetition and presence penalties first, when it sends them),
// so that q stays close to p and drafts are accepted often.
#pragma once

#include <glmrt/plugin/draft.h>

#include <cstdint>

namespace glmrt::draft_mtp {

/// Bits of a per-token mark: in the history (or an earlier draft), in the answer.
inline constexpr uint8_t kSeen = 1, kInAnswer = 2;

/// The host sampler's penalties on `logits`: divides (positive) or multiplies
/// (negative) the logit of every kSeen token by `repetition`, then subtracts
/// `presence` from every kInAnswer token's.
void apply_penalties(float* logits, int32_t vocab, const uint8_t* marks, float repetition,
                     float presence) noexcept;

/// Marks the request's history (kSeen) and its last n_answer tokens
/// (kInAnswer) in `marks` (vocab entries, cleared first); false when the
/// request carries no penalties or they are off (marks then untouched).
bool mark_history(const glmrt_draft_request& request, int32_t vocab, uint8_t* marks) noexcept;

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
