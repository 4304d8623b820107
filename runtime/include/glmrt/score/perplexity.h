// Perplexity of a long text, scored in overlapping windows the way Hugging
// Face's guide does it: each window holds at most `window` tokens, windows
// start `stride` tokens apart, and each token is counted once, in the first
// window that scores it, so every token after the first window is predicted
// from at least window - stride tokens of context.
#pragma once

#include <glmrt/score/sequence_scorer.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>

namespace glmrt {

struct PerplexityResult {
  double negative_log_likelihood = 0;  // sum over the scored tokens, nats
  int64_t tokens = 0;                  // tokens scored (all but the first)
  int64_t windows = 0;
  double perplexity() const { return tokens ? std::exp(negative_log_likelihood / tokens) : 0.0; }
};

/// `on_window(windows_done, tokens_done)` is told after every window
/// (progress). Throws glmrt::Error for fewer than two tokens or a stride
/// outside 1..window.
PerplexityResult perplexity(SequenceScorer& scorer, std::span<const int32_t> tokens, int64_t window,
                            int64_t stride,
                            const std::function<void(int64_t, int64_t)>& on_window = {});

}  // namespace glmrt
