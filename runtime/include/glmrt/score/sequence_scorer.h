// The log-probability of every token of a sequence given the tokens before
// it, computed through a Session: the KV cache of a prefix the session already
// holds is reused, and so are the scores already computed for it, so the many
// continuations of one context that an evaluation harness sends cost only
// their own tokens. Logits for every prefill row come from the hidden states
// of each chunk (memory.prefill_chunk), a block of rows at a time, so a long
// sequence never holds [length, vocab] logits at once.
#pragma once

#include <glmrt/base/error.h>
#include <glmrt/generate/session.h>
#include <glmrt/score/token_score.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace glmrt {

/// Thrown out of SequenceScorer::score when its cancel check says so.
class ScoringCancelled : public Error {
 public:
  ScoringCancelled() : Error("scoring cancelled") {}
};

class SequenceScorer {
 public:
  /// The most alternatives a score keeps (OpenAI allows 20 top_logprobs).
  static constexpr int kMaxTopLogprobs = 20;

  /// `session` must outlive the scorer; others may use it in between calls.
  explicit SequenceScorer(Session& session);

  struct Scored {
    std::vector<TokenScore> scores;  // scores[i] scores token i + 1
    std::vector<float> next_logits;  // predict the token after the sequence
    int64_t reused = 0;              // positions taken from the cache
  };

  /// Makes the session's sequence `tokens` and scores every token after the
  /// first, each with its `top_n` (<= kMaxTopLogprobs) best alternatives.
  /// `cancelled` is asked between prefill chunks; when it answers true the
  /// call throws ScoringCancelled and the session keeps what it held before.
  Scored score(std::span<const int32_t> tokens, int top_n,
               const std::function<bool()>& cancelled = {});

 private:
  Session& session_;
  // Scores of the last sequence scored: memo_[i] scores memo_tokens_[i + 1]
  // with kMaxTopLogprobs alternatives. A score depends only on the tokens up
  // to its own, so it stays valid for any sequence sharing that prefix.
  std::vector<int32_t> memo_tokens_;
  std::vector<TokenScore> memo_;
};

}  // namespace glmrt
