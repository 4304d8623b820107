// Several answers generated together: every step is one forward over each
// active stream's rows (Session::run_together) — a decode token per decoding
// stream, a prefill chunk per stream whose prompt is still running — so each
// MoE layer reads the union of their experts once, and a second stream costs
// its own rows, not a second pass over the weights. A stream whose session
// drafts verifies its drafts in the same forward, as many as the batch's
// plan finds paying (BatchDraftPlan: the cost of a row is the batch's). Each
// stream's greedy tokens are the ones generate() gives it alone; sampled
// ones too for the same seed when no stream drafts (a drafting stream's are
// distributed exactly as alone, drawn differently as drafting settings do).
#pragma once

#include <glmrt/draft/batch_draft_plan.h>
#include <glmrt/generate/generator.h>
#include <glmrt/generate/session.h>
#include <glmrt/sampling/sampler.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <vector>

namespace glmrt {

class BatchGeneration {
 public:
  explicit BatchGeneration(Engine& engine);
  ~BatchGeneration();
  BatchGeneration(const BatchGeneration&) = delete;
  BatchGeneration& operator=(const BatchGeneration&) = delete;

  /// Adds a stream: `session` (used by no other stream) becomes `prompt` —
  /// the prefix it already holds is kept, the rest is
  /// prefilled in the next steps in chunks of its prefill_chunk(), as
  /// set_context() does — then generates as generate() does. The session and
  /// sampler must outlive the stream. Returns the stream's id (0, 1, ...).
  /// Throws, adding nothing, for a prompt that is empty or longer than the
  /// profile's memory.max_context.
  int add(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
          const GenerationLimits& limits, TokenCallback on_token = {});
  /// As above, the callback seeing each token with the logits it was drawn
  /// from (empty for a draft that verification accepted, as
  /// continue_generation() gives them; `every_token` keeps the session's
  /// drafter idle so that every token comes with its logits).
  int add(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
          const GenerationLimits& limits, TokenLogitsCallback on_token,
          LogitsNeed need = LogitsNeed::when_decoded);
  /// Ends a stream now (reason cancelled, the tokens so far kept); the
  /// others go on unchanged. Nothing for a stream that has ended.
  void cancel(int id);
  /// One forward over every active stream. Returns false when no stream was
  /// active (nothing ran). When the forward throws, no stream changed: the
  /// step may be repeated, or streams cancelled.
  bool step();
  /// Steps until every stream has ended.
  void run();

  bool finished(int id) const;
  /// What ended the stream when its sampler or callback threw (the others
  /// went on), else null.
  std::exception_ptr error(int id) const;
  /// Frees a finished stream's state (its answer with it): a server adds
  /// streams for as long as it runs. The id may be given to a later stream.
  void forget(int id);
  /// The stream's answer so far (complete once finished()).
  const Generation& result(int id) const;
  /// Streams not yet ended.
  int active() const;
  /// Rows of the last step: prompt rows (prefill), decode rows (a token per
  /// decoding stream) and draft rows verified with them, the tokens the
  /// step decided, and the seconds its forward took (Session::run_together,
  /// as the sessions' stats count it: sampling and the rest of the step
  /// aside).
  struct StepRows {
    int64_t prefill = 0, decode = 0, drafts = 0, decided = 0;
    double seconds = 0;
  };
  const StepRows& last_step() const { return last_step_; }

 private:
  struct Stream;
  Stream& stream(int id) const;
  /// Takes the stream's next token: `token`, drawn from `logits` (empty for
  /// a draft's); ends the stream when the answer ends there or one more row
  /// would not fit the context.
  void take(Stream& s, int32_t token, std::span<const float> logits);
  /// Judges a drafting stream's verification rows and takes what it decided.
  void verified(Stream& s, std::span<const float> logits);
  /// Drafts for the decoding streams that draft, as the batch's plan says;
  /// a stream whose drafter fails ends with its error.
  void propose(std::span<Stream* const> drafting, int64_t other_rows, int64_t other_tokens);
  void fail_stream(Stream& s);
  void finish(Stream& s);

  Engine& engine_;
  BatchDraftPlan plan_;
  std::vector<std::unique_ptr<Stream>> streams_;
  StepRows last_step_;
};

}  // namespace glmrt
