// Speculative decoding for one session: each decode step asks the drafter for
// as many drafts as the cost model picks, runs the chosen token and the
// drafts through the main model as one batch, accepts drafts by rejection
// sampling against the session's sampling distribution (so greedy output is
// identical and sampled output is distributed exactly as without drafting),
// and drops the rejected rows from every cache.
#pragma once

#include <glmrt/draft/draft_cost_model.h>
#include <glmrt/draft/draft_proposal.h>
#include <glmrt/draft/draft_setup.h>
#include <glmrt/draft/draft_stats.h>
#include <glmrt/sampling/sampler.h>

#include <cstdint>
#include <memory>
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
  std::vector<int32_t> history_;
  size_t stable_ = 0;  // history_ and the session agree on this many tokens
  DraftStats stats_;
};

}  // namespace glmrt
