// How many drafts each sequence of a batched decode step verifies. Alone, a
// sequence drafts when its own tokens per second gain (DraftCostModel); in a
// batch the step is shared, so what counts is the batch's tokens per second:
// with B sequences a step decides B tokens, and one more verified row adds
// its acceptance chance a at the cost of one more row of the shared forward,
//   t_row = c1 + x1 m r + d
// (c1: a row's compute, x1: the distinct experts a row adds to the step's
// union, m r: what a miss costs the step, d: the drafter's own time), which
// pays when a / t_row beats the batch's tokens per second. The plan adds
// rows greedily, best a / t_row first, while they pay, and keeps them only
// when the batch gains DraftCostModel::kRequiredGain. Each sequence's
// acceptance comes from its own cost model; the row costs are fitted here on
// the batch's own steps. Under streaming, the union of several sequences'
// experts already covers much of what a draft row needs (x1 falls as the
// batch grows), which is what makes a draft cheaper in a batch than alone.
#pragma once

#include <glmrt/draft/draft_cost_model.h>

#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

/// One drafting sequence of the step, as its cost model sees it.
struct BatchDraftCandidate {
  std::vector<double> acceptance;  // a_j: draft j accepted once draft j-1 was
  double drafting_per_draft = 0;   // d, seconds
  int cap = 0;                     // most drafts it may verify now (0: none)
  int min_tokens = 1;              // a draft count is 0 or at least this
  bool adaptive = true;            // false: always cap (a fixed policy)
};

/// One batched step as it ran.
struct BatchStepMeasurement {
  int64_t rows = 0;          // rows of the forward: tokens, drafts, prompt chunks
  int64_t prefill_rows = 0;  // of which prompt rows
  double seconds = 0;        // the forward and its logits
  double read_seconds = 0;   // of which waiting for expert reads
  int64_t experts = 0;       // distinct routed experts resolved
  int64_t misses = 0;        // of which read from disk
};

/// The fitted costs of a step of `rows` rows.
struct BatchStepCost {
  double compute_base = 0, compute_per_row = 0;  // c0, c1 (seconds)
  double experts_base = 0, experts_per_row = 0;  // x0, x1
  double miss_rate = 0;                          // m
  double read_seconds_per_miss = 0;              // r
  double seconds(double rows) const;
  double per_row() const {
    return compute_per_row + experts_per_row * miss_rate * read_seconds_per_miss;
  }
};

class BatchDraftPlan {
 public:
  /// experts_per_position: E0 (MoE layers x top-k), the prior of x1.
  explicit BatchDraftPlan(int64_t experts_per_position);

  /// Drafts for each candidate. `other_rows`: the step's rows that are not
  /// the candidates' (prompt chunks, other sequences' tokens), deciding
  /// `other_tokens` tokens. Each candidate's own token counts one row.
  std::vector<int> plan(std::span<const BatchDraftCandidate> candidates, int64_t other_rows,
                        int64_t other_tokens);
  /// What the step that followed the plan measured.
  void record(const BatchStepMeasurement& m);

  BatchStepCost cost() const;
  /// Plans that were probes: one sequence given its shortest draft while
  /// drafting did not pay, so its acceptance stays measured.
  int64_t probes() const { return probes_; }

 private:
  struct Decaying {
    double value = 0;
    void add(double x, double decay) { value = value * decay + x; }
  };
  /// The greedy plan (every count 0 when drafting does not pay).
  std::vector<int> best(std::span<const BatchDraftCandidate> candidates, int64_t other_rows,
                        int64_t other_tokens) const;

  double experts_per_position_;
  // Decode steps only (a prompt chunk's rows cost more attention than a
  // decode row's): least-squares sums of compute and experts on rows.
  Decaying w_, sr_, srr_, sc_, src_, sx_, srx_;
  Decaying experts_, misses_, read_seconds_, read_misses_;
  int64_t steps_ = 0, zero_streak_ = 0, probes_ = 0, next_probe_ = 0;
  int64_t probe_interval_ = 8;  // draft_tuning::kFirstProbeInterval
};

}  // namespace glmrt
