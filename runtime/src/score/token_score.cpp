#include <glmrt/base/error.h>
#include <glmrt/score/token_score.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace glmrt {
namespace {

// Better first: a higher logit, then a lower id (as the greedy sampler picks).
bool ranks_before(const TopLogprob& a, const TopLogprob& b) {
  return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
}

// The n best entries of `logits` without sorting the whole vocabulary: a
// heap of size n whose top is the worst entry kept.
std::vector<TopLogprob> best_tokens(std::span<const float> logits, int n) {
  std::vector<TopLogprob> heap;
  if (n <= 0) return heap;
  heap.reserve(static_cast<size_t>(n) + 1);
  for (size_t i = 0; i < logits.size(); ++i) {
    const TopLogprob candidate{static_cast<int32_t>(i), logits[i]};
    if (static_cast<int>(heap.size()) < n) {
      heap.push_back(candidate);
      std::push_heap(heap.begin(), heap.end(), ranks_before);
    } else if (ranks_before(candidate, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), ranks_before);
      heap.back() = candidate;
      std::push_heap(heap.begin(), heap.end(), ranks_before);
    }
  }
  std::sort(heap.begin(), heap.end(), ranks_before);
  return heap;
}

}  // namespace

TokenScore score_logits(std::span<const float> logits, int32_t target, int top_n) {
  if (target < 0 || static_cast<size_t>(target) >= logits.size())
    fail("score: token id {} is outside the vocabulary of {} tokens", target, logits.size());
  double max_logit = -std::numeric_limits<double>::infinity();
  for (float l : logits) max_logit = std::max<double>(max_logit, l);
  if (!std::isfinite(max_logit))
    fail("score: the largest logit is {} (expected a finite value)", max_logit);
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max_logit);
  const double log_z = max_logit + std::log(sum);

  TokenScore score;
  score.token = target;
  score.logprob = static_cast<double>(logits[target]) - log_z;
  score.greedy = static_cast<double>(logits[target]) >= max_logit;
  score.top = best_tokens(logits, top_n);
  for (TopLogprob& t : score.top) t.logprob -= log_z;
  return score;
}

ContinuationScore score_continuation(std::span<const TokenScore> scores, int64_t context_length) {
  if (context_length < 1)
    fail("score: the context needs at least one token (the first token has no prediction)");
  const int64_t total = static_cast<int64_t>(scores.size()) + 1;
  if (context_length > total)
    fail("score: context of {} tokens is longer than the sequence of {}", context_length, total);
  ContinuationScore result;
  for (int64_t i = context_length; i < total; ++i) {
    const TokenScore& s = scores[static_cast<size_t>(i - 1)];
    result.logprob += s.logprob;
    result.greedy = result.greedy && s.greedy;
    ++result.tokens;
  }
  return result;
}

}  // namespace glmrt
