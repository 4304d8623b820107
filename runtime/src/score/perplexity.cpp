#include <glmrt/base/error.h>
#include <glmrt/score/perplexity.h>

#include <algorithm>

namespace glmrt {

PerplexityResult perplexity(SequenceScorer& scorer, std::span<const int32_t> tokens, int64_t window,
                            int64_t stride,
                            const std::function<void(int64_t, int64_t)>& on_window) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  if (T < 2) fail("perplexity: the text has {} token(s); at least 2 are needed", T);
  if (window < 2) fail("perplexity: the window must hold at least 2 tokens, got {}", window);
  if (stride < 1 || stride > window)
    fail("perplexity: the stride must be in 1..window ({}), got {}", window, stride);
  PerplexityResult result;
  int64_t scored_until = 1;  // tokens before this one are counted (token 0 never is)
  for (int64_t begin = 0;; begin += stride) {
    const int64_t end = std::min(begin + window, T);
    const auto scored = scorer.score(tokens.subspan(begin, end - begin), 0);
    for (int64_t j = std::max(scored_until, begin + 1); j < end; ++j)
      result.negative_log_likelihood -= scored.scores[static_cast<size_t>(j - begin - 1)].logprob;
    result.tokens += end - std::max(scored_until, begin + 1);
    scored_until = end;
    ++result.windows;
    if (on_window) on_window(result.windows, result.tokens);
    if (end == T) break;
  }
  return result;
}

}  // namespace glmrt
