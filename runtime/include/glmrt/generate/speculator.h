// Speculative decoding for one session: each decode step asks the drafter for
// as many drafts as the cost model picks, runs the chosen token and the
// drafts through the main model as one batch, accepts drafts by rejection
// sampling against the session's sampling distribution (so greedy output is
// identical and sampled output is distributed exactly as without drafting),
// and drops the rejected rows from every cache.
#pragma once

#include <glmrt/draft/batch_draft_plan.h>
#include <glmrt/draft/draft_cost_model.h>
#include <glmrt/draft/draft_proposal.h>
#include <glmrt/draft/draft_setup.h>
#include <glmrt/draft/draft_stats.h>
#include <glmrt/sampling/sampler.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <vector>

namespace glmrt {

class Session;
class SessionDraftHost;

/// What one speculative step decided.
struct SpeculativeStep {
  std::vector<int32_t> accepted;  // the drafts accepted, in order
  /// The token after them (drawn in place of the first rejected draft, or
  /// from the row after the last draft); -1 when the step already decided
  /// `limit` tokens and none was needed.
  int32_t next = -1;
};

class Speculator {
 public:
  /// Drafts for `session` with `setup`'s drafter (which outlives this).
  Speculator(Session& session, const DraftSetup& setup);
  ~Speculator();
  Speculator(const Speculator&) = delete;
  Speculator& operator=(const Speculator&) = delete;

  /// One decode step for `token`, chosen but not yet run. `context` is every
  /// token so far and `generated` the answer so far, both ending with `token`
  /// (the penalties see them, and the drafts accepted after them). `limit`
  /// (>= 1) is how many tokens the caller may still take after `token`.
  /// On return the session holds `token` and the accepted drafts (the last of
  /// them may be missing when `limit` was reached). When it throws, the
  /// session is as before the call.
  SpeculativeStep step(int32_t token, Sampler& sampler, std::span<const int32_t> context,
                       std::span<const int32_t> generated, int limit);

  /// step() in two halves, for a caller that runs the verification forward
  /// itself, together with other sessions' rows (BatchGeneration).
  /// What this sequence brings to the batch's plan (BatchDraftPlan) for a
  /// step that may take `limit` tokens: its acceptance, its drafter's time,
  /// and the most drafts it may verify now.
  BatchDraftCandidate candidate(int limit) const;
  /// Drafts `wanted` (0..candidate(limit).cap, as the batch's plan decided)
  /// for `token` and returns the rows the verification forward appends: the
  /// token and the drafts. They stay valid until verify() or abandon().
  std::span<const int32_t> propose(int32_t token, const Sampler& sampler,
                                   std::span<const int32_t> generated, int limit, int wanted);
  /// Judges the drafts on `logits` [rows, vocab], every row's of the
  /// verification forward the caller ran (the rows are in the session), and
  /// keeps only the accepted rows. Arguments as step()'s. The step's cost is
  /// the caller's to measure: only the drafts' acceptance is recorded here.
  /// When it throws, the session is as before the forward.
  SpeculativeStep verify(std::span<const float> logits, Sampler& sampler,
                         std::span<const int32_t> context, std::span<const int32_t> generated);
  /// The proposed step did not run: forgets it (and the drafter's MTP rows).
  void abandon();

  const DraftStats& stats() const { return stats_; }
  /// The drafts the last step's drafter proposed (before verification; empty
  /// when it was not asked), valid until the next step.
  std::span<const int32_t> last_proposal() const { return proposal_.tokens(); }
  const DraftCostModel& cost_model() const { return cost_; }

  /// The session dropped its tokens from `length` on (a new prompt diverged,
  /// a reset): the drafter forgets what followed.
  void history_truncated(int64_t length);

 private:
  /// history_ = the session's tokens + `token`, rewinding the drafter where
  /// it differs from what it saw last.
  void sync_history(int32_t token);
  /// What propose() left for verify().
  struct Pending {
    int64_t before = 0;  // the session's tokens before the step
    int drafts = 0;      // drafts to verify
    bool next_needed = true;
    std::optional<DraftDistribution> shadow;
    std::vector<int32_t> rows;  // the token and the drafts it verifies
  };
  /// The most drafts the context has room for in a step for `limit`.
  int draft_cap(int limit) const;
  /// propose() without counting the choice (step() counted it).
  std::span<const int32_t> propose_rows(int32_t token, const Sampler& sampler,
                                        std::span<const int32_t> generated, int limit, int wanted);
  /// verify() with the step's measured cost, or none (the caller's).
  SpeculativeStep judge(std::span<const float> logits, Sampler& sampler,
                        std::span<const int32_t> context, std::span<const int32_t> generated,
                        const VerifyMeasurement* measured);
  /// Asks the drafter for up to `wanted` drafts (the history's last
  /// `n_answer` tokens are the answer); returns how many to verify.
  int draft(int32_t token, const Sampler& sampler, int wanted, int64_t n_answer);

  Session& session_;
  plugin::Draft& drafter_;
  DraftPolicy policy_;
  std::unique_ptr<SessionDraftHost> host_;
  bool shadow_;  // adaptive, and the drafter is cheap: judge unverified drafts
  DraftCostModel cost_;
  DraftProposal proposal_;
  std::mt19937_64 draft_rng_;      // the uniforms drafters draw with
  bool draft_rng_seeded_ = false;  // seeded from the first sampler's seed
  std::optional<Pending> pending_;
  std::vector<int32_t> history_;
  size_t stable_ = 0;  // history_ and the session agree on this many tokens
  DraftStats stats_;
};

}  // namespace glmrt
