// What speculative decoding did, for `run`, `chat`, `validate` and `bench`:
// proposals, acceptance per draft position, tokens per forward, the expert
// reads drafting caused and what the cost model chose.
#pragma once

#include <glmrt/draft/draft_cost_model.h>

#include <cstdint>
#include <string>
#include <vector>

namespace glmrt {

struct DraftStats {
  std::string drafter;
  bool adaptive = true;
  int64_t forwards = 0;   // verification forwards (decode steps with or without drafts)
  int64_t decided = 0;    // tokens they decided: accepted drafts + the token after them
  int64_t requested = 0;  // drafts asked of the drafter
  int64_t proposed = 0;   // drafts it returned that were verified
  int64_t accepted = 0;
  int64_t too_short = 0;                        // proposals under draft_min_tokens, not verified
  std::vector<int64_t> judged_at, accepted_at;  // per draft position (index 0 = draft 1)
  double drafting_seconds = 0;
  /// Extra distinct experts verification resolved beyond the first row's, and
  /// of them the share read from disk (the step's miss rate; an estimate).
  int64_t verify_extra_experts = 0;
  double verify_extra_reads = 0;
  int64_t drafter_reads = 0;    // experts the drafter's MTP calls read from disk
  std::vector<int64_t> chosen;  // the cost model's choices, index = drafts
  int64_t probes = 0;
  int64_t shadow_drafts = 0;   // unverified drafts judged while the cost model chose 0
  DraftCostEstimate estimate;  // the cost model's view after the last step

  double tokens_per_forward() const { return forwards ? double(decided) / double(forwards) : 0.0; }
};

/// The work between two snapshots (chat reports each turn). The estimate is
/// `now`'s.
DraftStats draft_stats_since(const DraftStats& now, const DraftStats& before);

/// Lines for a report, each beginning "draft": totals, acceptance by
/// position, and the cost model.
std::vector<std::string> describe_draft_stats(const DraftStats& stats);

}  // namespace glmrt
