// The log-probability of one token under the model's distribution at one
// position: what evaluation harnesses sum (log-likelihood of a continuation),
// what OpenAI's `logprobs` report, and what perplexity averages. One function
// computes it for `glmrt score`, /v1/completions' echo and generated tokens,
// so every path reports the same number for the same logits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

struct TopLogprob {
  int32_t token = 0;
  double logprob = 0;
};

struct TokenScore {
  int32_t token = 0;    // the token scored
  double logprob = 0;   // log P(token | everything before it): log-softmax of the raw logits
  bool greedy = false;  // no token is more probable (ties count as greedy)
  std::vector<TopLogprob> top;  // the most probable tokens, best first (ties by lower id)
};

/// Scores `target` against one row of logits [vocab], in double precision,
/// keeping the `top_n` most probable alternatives. Throws glmrt::Error for a
/// target outside the vocabulary or logits without a finite maximum.
TokenScore score_logits(std::span<const float> logits, int32_t target, int top_n);

/// The log-likelihood of a continuation: the sum of its tokens' logprobs, how
/// many there are, and whether every one of them was the most probable.
struct ContinuationScore {
  double logprob = 0;
  int64_t tokens = 0;
  bool greedy = true;
};

/// `scores[i]` scores token i + 1 of a sequence (as SequenceScorer returns
/// them); the continuation is every token from `context_length` on.
ContinuationScore score_continuation(std::span<const TokenScore> scores, int64_t context_length);

}  // namespace glmrt
