// One conversation's sequence: its tokens and KV cache. Setting a new context
// keeps the longest common prefix with what is cached and prefills only the
// rest, so multi-turn chat never recomputes the shared history.
#pragma once

#include <glmrt/engine/engine.h>

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace glmrt {

struct SessionStats {
  int64_t prefilled_tokens = 0, reused_tokens = 0, decoded_tokens = 0;
  double prefill_seconds = 0, decode_seconds = 0;
};

class Session {
 public:
  explicit Session(Engine& engine);

  /// Makes the sequence equal `tokens` and returns the logits [vocab] that
  /// predict the token after them. A step that throws (a failed expert read,
  /// say) leaves the session holding the prefix it kept from before, cache
  /// and tokens consistent, so the call can simply be repeated.
  std::vector<float> set_context(std::span<const int32_t> tokens);
  /// set_context for callers that need more than the last position (scoring,
  /// cancellation): keeps at most `max_reuse` cached tokens, and shows
  /// `on_rows(first, hidden)` the hidden states [n, hidden] (before the final
  /// norm) of positions first..first+n-1 of `tokens` as each prefill chunk is
  /// computed. An exception thrown by `on_rows` stops the run and leaves the
  /// session as a failed step does. `reused` is how many tokens were kept.
  struct ContextRun {
    std::vector<float> logits;
    int64_t reused = 0;
  };
  ContextRun set_context(std::span<const int32_t> tokens, int64_t max_reuse,
                         const Model::ChunkSink& on_rows);
  /// Appends one token (a decode step) and returns the next logits. When it
  /// throws, the sequence is as it was before the call.
  std::vector<float> append(int32_t token);
  /// Forgets everything.
  void reset();

  const std::vector<int32_t>& tokens() const { return tokens_; }
  const SessionStats& stats() const { return stats_; }
  Engine& engine() { return engine_; }

 private:
  std::vector<float> run(std::span<const int32_t> tokens, bool prefill,
                         const Model::ChunkSink& on_rows = {});

  Engine& engine_;
  KvCache cache_;
  std::vector<int32_t> tokens_;
  SessionStats stats_;
};

}  // namespace glmrt
