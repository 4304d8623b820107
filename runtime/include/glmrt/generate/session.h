// One conversation's sequence: its tokens and caches (main layers, indexer
// keys, and the MTP layer's rows when its drafter runs the MTP layer). Setting
// a new context keeps the longest common prefix with what is cached and
// prefills only the rest, so multi-turn chat never recomputes the shared
// history. A session may decode with a drafter (speculative decoding): the
// profile's `plugins.draft`, or one given explicitly.
#pragma once

#include <glmrt/draft/draft_setup.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/mtp_rows.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace glmrt {

class Speculator;
class Session;

/// One session's part of a step taken with others (Session::run_together).
struct SessionStep {
  Session& session;
  std::span<const int32_t> tokens;  // appended to its sequence by this step
  bool prefill = false;             // prompt tokens (counted as prefill), else a decode step
  bool logits = true;               // whether its next-token logits are needed
  /// The logits of every row [tokens, vocab] (a token and its drafts, as
  /// extend() gives them), not only the last row's; `logits` must be true.
  bool every_row = false;
};

struct SessionStats {
  int64_t prefilled_tokens = 0, reused_tokens = 0, decoded_tokens = 0;
  double prefill_seconds = 0, decode_seconds = 0;
};

/// The work done between two snapshots of a session's stats (one answer's).
SessionStats session_stats_since(const SessionStats& now, const SessionStats& before);

class Session {
 public:
  /// Decodes with the drafter the engine's profile names (none for
  /// `plugins.draft: none`).
  explicit Session(Engine& engine);
  /// Decodes with `drafting` (std::nullopt: without a drafter).
  Session(Engine& engine, std::optional<DraftSetup> drafting);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

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
  /// The first half of set_context() for a caller that runs the prompt's
  /// remaining tokens itself (run_together): keeps the longest prefix of
  /// `tokens` the cache holds (never all of them: the last runs again for its
  /// logits) and drops the rest. Returns how many tokens were kept.
  int64_t keep_prefix(std::span<const int32_t> tokens);
  /// Steps of several distinct sessions as one forward
  /// (Model::forward_batch): each appends its tokens, and gets the logits
  /// [vocab] after its last one (empty when `logits` is false; every row's
  /// with `every_row`, as extend() gives them). Each session's logits are bit
  /// for bit those append(), extend() or a prefill chunk of set_context()
  /// gives it alone, its MTP rows follow as they would, and its stats count
  /// the whole step's time. When it throws, no session changed.
  static std::vector<std::vector<float>> run_together(std::span<const SessionStep> steps);
  /// Appends one token (a decode step) and returns the next logits. When it
  /// throws, the sequence is as it was before the call.
  std::vector<float> append(int32_t token);
  /// Appends `tokens` as one batched step (a token and the drafts after it)
  /// and returns the logits of every row [tokens.size(), vocab]: row i
  /// predicts the token after tokens[i]. When it throws, nothing changed.
  std::vector<float> extend(std::span<const int32_t> tokens);
  /// Keeps the first `length` tokens, dropping the last step's rejected rows
  /// from every cache (main layers, indexer keys, MTP rows). Within the last
  /// extend()/append() the state at the new last position is kept; before it
  /// (an answer that ends on an accepted draft after its step dropped the
  /// rejected ones) it is not, and the next set_context() runs that token
  /// again where the MTP rows need it.
  void rollback_to(int64_t length);
  /// Forgets everything.
  void reset();
  /// Positions one prefill forward takes at most (default: the engine's
  /// Engine::prefill_chunk(), as the memory plan resolved it; 0 = the whole
  /// prompt at once, beyond what the plan counted when it chose a chunk).
  void set_prefill_chunk(int64_t chunk) { prefill_chunk_ = chunk; }
  int64_t prefill_chunk() const { return prefill_chunk_; }

  const std::vector<int32_t>& tokens() const { return tokens_; }
  /// Bytes the KV cache holds allocated (its capacity, not only its rows).
  uint64_t cache_bytes() const { return cache_.bytes(); }
  const SessionStats& stats() const { return stats_; }
  Engine& engine() { return engine_; }
  /// The drafter this session decodes with, or nullptr.
  Speculator* speculator() { return speculator_.get(); }

  /// The main model's final-normed hidden state at the last position (what
  /// the MTP layer consumes); empty before the first step.
  std::span<const float> last_hidden() const { return last_hidden_; }
  /// Runs the MTP layer for a drafter (MtpRows::run); needs a session that
  /// keeps MTP rows (its drafter declared GLMRT_DRAFT_NEEDS_MTP).
  std::vector<float> run_mtp(int32_t token, int64_t position, std::span<const float> h,
                             bool verified_pair);
  /// Drops MTP rows a drafter added for a step that then did not happen (its
  /// verification failed): only rows of pairs inside the sequence stay.
  void discard_mtp_drafts();
  const MtpRows* mtp_rows() const { return mtp_ ? &*mtp_ : nullptr; }
  /// Decode time a drafter spent outside the session's own steps (counted in
  /// decode_seconds, so decode tokens/s stays honest).
  void add_decode_seconds(double seconds) { stats_.decode_seconds += seconds; }

 private:
  enum class Logits { last_row, every_row };
  std::vector<float> run(std::span<const int32_t> tokens, bool prefill, Logits which,
                         const Model::ChunkSink& on_rows = {});
  /// What a step's rows `hidden` [n, hidden] (before the final norm) for
  /// `tokens` at positions first.. leave: `last` becomes the last row's
  /// final-normed state (it holds the state before them on entry),
  /// `step_hidden` every row's when `every_row`, and the MTP rows get their
  /// pairs.
  void take_rows(int64_t first, std::span<const int32_t> tokens, std::span<const float> hidden,
                 bool prefill, bool every_row, std::vector<float>& last,
                 std::vector<float>& step_hidden);
  /// Drops everything past `length` tokens, in every cache.
  void truncate(int64_t length);
  /// Keeps at most `max_reuse` tokens of the longest prefix of `tokens` the
  /// session holds (never all of them), dropping the rest; returns how many.
  int64_t reuse_prefix(std::span<const int32_t> tokens, int64_t max_reuse);
  /// What a step that appended `tokens` (at `first`) leaves: the tokens, the
  /// last state (`last`, final-normed) and the stats.
  void record_step(std::span<const int32_t> tokens, int64_t first, std::vector<float> last,
                   std::vector<float> step_hidden, bool every_row, bool prefill, double seconds);

  Engine& engine_;
  int64_t prefill_chunk_;
  KvCache cache_;
  std::vector<int32_t> tokens_;
  SessionStats stats_;
  std::optional<MtpRows> mtp_;
  std::vector<float> last_hidden_;  // [hidden], final-normed; empty when unknown
  // The last step's rows, for rollback_to(): its first position and the
  // final-normed state of each row.
  int64_t step_first_ = 0;
  std::vector<float> step_hidden_, hidden_before_step_;
  DraftSetup drafting_;  // owns the drafter; declared before its speculator
  std::unique_ptr<Speculator> speculator_;
};

}  // namespace glmrt
