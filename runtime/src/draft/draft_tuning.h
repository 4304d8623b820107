// The constants both draft-length deciders share: a sequence's own cost
// model (DraftCostModel) and a batch's plan (BatchDraftPlan).
#pragma once

#include <cstdint>

namespace glmrt::draft_tuning {

// Decay per observation: acceptance drifts with the text, the miss rate with
// the cache's contents (so it follows fastest), compute barely.
inline constexpr double kAcceptanceDecay = 0.98;
inline constexpr double kComputeDecay = 0.95;
inline constexpr double kMissDecay = 0.9;
inline constexpr double kDraftingDecay = 0.95;
// Before the fit has two different row counts to go by: one more verified
// row costs this share of a one-row step's compute (on a CPU the weights are
// read once for every row, so extra rows cost little but not nothing)...
inline constexpr double kPriorComputePerRow = 0.2;
// ... and brings this share of a row's experts that no other row needed.
inline constexpr double kPriorExtraExpertShare = 0.8;
// An extra verified row is never free: when noisy step times fit a slope
// below this share of a step, this share is used (a fit of 0 would make any
// acceptance at all look worth drafting for).
inline constexpr double kMinComputePerRow = 0.05;
// Below this variance of the row count the slope of the fit is noise.
inline constexpr double kMinRowVariance = 0.05;
// While drafting does not pay, probes may cost at most this share of the
// decode time: a probe that costs a whole extra step waits 50 steps.
inline constexpr double kProbeBudget = 0.02;
// Steps without drafts before a probe, doubling while probes keep failing.
inline constexpr int64_t kFirstProbeInterval = 8;
inline constexpr int64_t kLastProbeInterval = 256;

}  // namespace glmrt::draft_tuning
