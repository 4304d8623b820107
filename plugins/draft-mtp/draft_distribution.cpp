#include "draft_distribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace glmrt::draft_mtp {

Penalties Penalties::of(const glmrt_draft_request& request) noexcept {
  Penalties p;
  if (!GLMRT_DRAFT_REQUEST_HAS_PENALTIES(&request)) return p;
  // A zeroed repetition penalty is off too (a host that fills only what it
  // knows): repetition_on() says so rather than dividing by it.
  p.repetition = request.repetition_penalty;
  p.presence = request.presence_penalty;
  if (GLMRT_DRAFT_REQUEST_HAS_FREQUENCY_PENALTY(&request)) p.frequency = request.frequency_penalty;
  return p;
}

void apply_penalties(float* logits, int32_t vocab, TokenCounts counts,
                     const Penalties& penalties) noexcept {
  const bool repetition = penalties.repetition_on();
  for (int32_t v = 0; v < vocab; ++v) {
    if (repetition && counts.seen[v])
      logits[v] =
          logits[v] > 0 ? logits[v] / penalties.repetition : logits[v] * penalties.repetition;
    if (const int32_t n = counts.in_answer[v]; n > 0)
      logits[v] -= penalties.presence + penalties.frequency * static_cast<float>(n);
  }
}

void count_history(const glmrt_draft_request& request, int32_t vocab, TokenCounts counts) noexcept {
  std::fill(counts.seen, counts.seen + vocab, uint8_t{0});
  std::fill(counts.in_answer, counts.in_answer + vocab, int32_t{0});
  const int64_t n = request.n_history;
  const int64_t answer_from = n - std::clamp<int64_t>(request.n_answer, 0, n);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t t = request.history[i];
    if (t < 0 || t >= vocab) continue;
    counts.seen[t] = 1;
    if (i >= answer_from) ++counts.in_answer[t];
  }
}

float top_probability(const float* logits, int32_t vocab) noexcept {
  const float top = *std::max_element(logits, logits + vocab);
  double sum = 0.0;
  for (int32_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(logits[v]) - top);
  return static_cast<float>(1.0 / sum);
}

int32_t argmax(const float* logits, int32_t vocab) noexcept {
  return static_cast<int32_t>(std::max_element(logits, logits + vocab) - logits);
}

int32_t shape_distribution(const float* logits, int32_t vocab, const glmrt_draft_request& request,
                           int32_t* order, int32_t* ids, float* probs) noexcept {
  std::iota(order, order + vocab, 0);
  const auto by_logit = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  int32_t keep = vocab;
  if (request.top_k > 0 && request.top_k < keep) keep = request.top_k;
  std::partial_sort(order, order + keep, order + vocab, by_logit);
  const double top = logits[order[0]];
  const double temperature = request.temperature;
  double total = 0.0;
  for (int32_t i = 0; i < keep; ++i) {
    const double p = std::exp((logits[order[i]] - top) / temperature);
    probs[i] = static_cast<float>(p);
    ids[i] = order[i];
    total += p;
  }
  for (int32_t i = 0; i < keep; ++i) probs[i] = static_cast<float>(probs[i] / total);
  if (request.top_p < 1.0f) {  // the smallest prefix whose mass reaches top_p
    double cumulative = 0.0;
    int32_t n = 0;
    while (n < keep) {
      cumulative += probs[n++];
      if (cumulative >= request.top_p) break;
    }
    keep = n;
  }
  int32_t count = 0;
  const float floor = request.min_p > 0.0f ? request.min_p * probs[0] : 0.0f;
  for (int32_t i = 0; i < keep; ++i) {
    if (i > 0 && (probs[i] < floor || probs[i] <= 0.0f)) continue;
    ids[count] = ids[i];
    probs[count] = probs[i];
    ++count;
  }
  double kept = 0.0;
  for (int32_t i = 0; i < count; ++i) kept += probs[i];
  for (int32_t i = 0; i < count; ++i) probs[i] = static_cast<float>(probs[i] / kept);
  return count;
}

int32_t draw(const float* probs, int32_t count, double u) noexcept {
  for (int32_t i = 0; i < count; ++i) {
    if (u < probs[i]) return i;
    u -= probs[i];
  }
  return count - 1;  // rounding left a sliver of mass
}

}  // namespace glmrt::draft_mtp
