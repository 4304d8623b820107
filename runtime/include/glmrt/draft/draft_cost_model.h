// How many drafts one decode step should verify, from what the steps so far
// measured. A step that verifies k drafts decides, on average,
//   tokens(k) = 1 + sum_{i=1..k} prod_{j<=i} a_j
// tokens (a_j: the measured rate at which draft j is accepted once draft j-1
// was), and costs
//   seconds(k) = c0 + c1 k                      compute (fitted on k)
//              + (E0 + e1 k) m r                expert reads
//              + d k                            the drafter's own time
// with E0 the distinct routed experts one position needs, e1 the extra
// distinct experts each drafted position brought, m the current miss rate of
// the expert cache and r the time a step waits per missed expert (reads
// run in parallel and ahead of the step, so this is less than a read takes). Under expert
// streaming e1 m r is what makes drafting slower than none (other engines
// measured MTP on offloaded GLM-5 at 15-37% slower): the model picks the k
// with the most tokens per second, 0 unless drafting pays by 5%, and
// probes now and then so the measurements it decides on stay current.
#pragma once

#include <glmrt/draft/draft_setup.h>

#include <cstdint>
#include <vector>

namespace glmrt {

/// One verification step: the main model's forward over the token and its
/// drafts, and what the drafts came to.
struct VerifyMeasurement {
  int drafts = 0;           // drafts verified
  int accepted = 0;         // of which accepted (a prefix)
  double seconds = 0;       // wall time of the forward and its logits
  double read_seconds = 0;  // of which waiting for expert reads
  int64_t experts = 0;      // distinct routed experts it resolved (cache hits + misses)
  int64_t misses = 0;       // of which read from disk
};

/// One call of the drafter.
struct DraftingMeasurement {
  int requested = 0;  // drafts asked for
  int proposed = 0;   // drafts it returned
  double seconds = 0;
};

/// The model's current view, for reports and tests.
struct DraftCostEstimate {
  std::vector<double> acceptance;    // a_j, j = 1..max_tokens
  double compute_base = 0;           // c0, seconds
  double compute_per_draft = 0;      // c1, seconds
  double experts_per_position = 0;   // E0
  double experts_per_draft = 0;      // e1
  double miss_rate = 0;              // m
  double read_seconds_per_miss = 0;  // r
  double drafting_per_draft = 0;     // d, seconds
  double tokens(int k) const;
  double seconds(int k) const;
  double tokens_per_second(int k) const;
};

class DraftCostModel {
 public:
  /// A drafted step must beat decoding without drafts by this factor (step
  /// times are noisy; drafting must never end up slower than none).
  static constexpr double kRequiredGain = 1.05;

  /// experts_per_position: E0, known from the config (MoE layers x top-k).
  /// drafter_experts_per_draft: routed experts the drafter itself resolves
  /// per draft (the MTP layer's top-k for draft-mtp, 0 for a drafter that
  /// runs no layer): its read cost is the drafter's time until measured.
  DraftCostModel(DraftPolicy policy, int64_t experts_per_position,
                 int64_t drafter_experts_per_draft = 0);

  /// Drafts to ask for in the next step, 0..limit (limit: what the step may
  /// still verify). Fixed policy: min(max_tokens, limit). Adaptive: 0 for
  /// the first step (measuring a plain one), then best() on what is measured
  /// and the priors (acceptance 1/2 for the first position, the previous
  /// position's estimate for a later one), with an occasional probe while it
  /// says 0. There is no
  /// unconditional measuring step: under expert streaming a draft can cost
  /// more than a whole step, and the first probe waits for its budget too.
  int choose(int limit);
  /// The k in {0} and [min_tokens, limit] with the most tokens per second,
  /// at most one position past the deepest draft position measured so far.
  int best(int limit) const;

  /// The most drafts best() may choose for `limit`: one position past the
  /// deepest measured (0 when fewer than min_tokens fit).
  int explorable(int limit) const;
  /// A draft count the caller decided (a batch's plan), counted in chosen().
  int planned(int k) { return record_choice(k); }
  const DraftPolicy& policy() const { return policy_; }

  void record_verification(const VerifyMeasurement& m);
  /// Only the acceptance of a verification whose cost the caller measures
  /// (a batch step's, with other sequences' rows).
  void record_acceptance(int drafts, int accepted);
  void record_drafting(const DraftingMeasurement& m);
  /// A first draft that was not verified, with the probability verification
  /// would have accepted it (min(1, p/q) on the row the step computed).
  void record_shadow(double acceptance);

  DraftCostEstimate estimate() const;
  /// How often each draft count was chosen, index = drafts.
  const std::vector<int64_t>& chosen() const { return chosen_; }
  /// Decisions that were probes, not best().
  int64_t probes() const { return probes_; }

 private:
  /// An exponentially decaying sum: recent steps weigh more.
  struct Decaying {
    double value = 0;
    void add(double x, double decay) { value = value * decay + x; }
  };
  int record_choice(int k);
  /// Steps without drafts before the next probe: the probe interval, or
  /// longer when a probe costs so much that it would take more than
  /// kProbeBudget of the decode time.
  int64_t probe_wait() const;

  DraftPolicy policy_;
  double experts_per_position_;
  double drafter_experts_per_draft_;
  // Acceptance per draft position: how often it was reached, and accepted.
  std::vector<Decaying> reached_, accepted_;
  // Compute time fitted on k: decaying least-squares sums.
  Decaying w_, sk_, skk_, sc_, skc_;
  Decaying experts_, misses_, read_seconds_, read_misses_, extra_experts_, extra_drafts_;
  Decaying drafting_seconds_, drafting_requested_;
  int64_t steps_ = 0, decisions_ = 0, probes_ = 0;
  int64_t zero_streak_ = 0, probe_interval_ = 8;  // draft_tuning::kFirstProbeInterval
  std::vector<int64_t> chosen_;

  static constexpr int64_t kNeighbourEvery = 16;
};

}  // namespace glmrt
