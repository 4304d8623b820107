#include <glmrt/draft/batch_draft_plan.h>

#include "draft_tuning.h"

#include <algorithm>
#include <cmath>

namespace glmrt {
namespace {

using namespace draft_tuning;

double reach_of(const BatchDraftCandidate& c, int j) {
  double r = 1.0;
  for (int l = 0; l < j && l < static_cast<int>(c.acceptance.size()); ++l) r *= c.acceptance[l];
  return j <= static_cast<int>(c.acceptance.size()) ? r : 0.0;
}

}  // namespace

double BatchStepCost::seconds(double rows) const {
  return compute_base + compute_per_row * rows +
         (experts_base + experts_per_row * rows) * miss_rate * read_seconds_per_miss;
}

BatchDraftPlan::BatchDraftPlan(int64_t experts_per_position)
    : experts_per_position_(static_cast<double>(experts_per_position)) {}

BatchStepCost BatchDraftPlan::cost() const {
  BatchStepCost e;
  if (w_.value <= 0) return e;
  const double mean_r = sr_.value / w_.value, mean_c = sc_.value / w_.value;
  const double mean_x = sx_.value / w_.value;
  const double variance = srr_.value / w_.value - mean_r * mean_r;
  const bool fit = variance > kMinRowVariance && steps_ >= 3;
  if (fit) {
    e.compute_per_row = (src_.value / w_.value - mean_r * mean_c) / variance;
    e.compute_base = mean_c - e.compute_per_row * mean_r;
    e.experts_per_row = (srx_.value / w_.value - mean_r * mean_x) / variance;
  }
  if (e.compute_base <= 0 ||
      e.compute_per_row < kMinComputePerRow * (e.compute_base + e.compute_per_row)) {
    // T(rows) = one * (1 + share (rows - 1)), through the mean.
    const double share = e.compute_base > 0 ? kMinComputePerRow : kPriorComputePerRow;
    const double one = mean_c / (1.0 + share * std::max(0.0, mean_r - 1.0));
    e.compute_per_row = share * one;
    e.compute_base = one - e.compute_per_row;
  }
  if (!fit) e.experts_per_row = kPriorExtraExpertShare * mean_x / std::max(1.0, mean_r);
  e.experts_per_row = std::clamp(e.experts_per_row, 0.0, experts_per_position_);
  e.experts_base = std::max(0.0, mean_x - e.experts_per_row * mean_r);
  e.miss_rate = experts_.value > 0 ? misses_.value / experts_.value : 0.0;
  e.read_seconds_per_miss = read_misses_.value > 0 ? read_seconds_.value / read_misses_.value : 0.0;
  return e;
}

std::vector<int> BatchDraftPlan::best(std::span<const BatchDraftCandidate> candidates,
                                      int64_t other_rows, int64_t other_tokens) const {
  const size_t n = candidates.size();
  std::vector<int> k(n, 0);
  const BatchStepCost c = cost();
  const double per_row = c.per_row();
  double rows = static_cast<double>(other_rows + static_cast<int64_t>(n));
  double tokens = static_cast<double>(other_tokens + static_cast<int64_t>(n));
  double extra = 0;  // the drafters' own time
  for (size_t i = 0; i < n; ++i) {
    if (candidates[i].adaptive || candidates[i].cap <= 0) continue;
    k[i] = candidates[i].cap;
    rows += k[i];
    for (int j = 1; j <= k[i]; ++j) tokens += reach_of(candidates[i], j);
    extra += k[i] * candidates[i].drafting_per_draft;
  }
  const auto seconds = [&] { return c.seconds(rows) + extra; };
  if (c.compute_base <= 0 || seconds() <= 0) return k;  // nothing measured: adaptive ones wait
  const double plain_rate = tokens / seconds();
  std::vector<int> plain = k;
  for (;;) {
    // The next rows of the sequence whose next draft gains most per second.
    int chosen = -1;
    double gain = 0, cost_of = 0, best_ratio = 0;
    for (size_t i = 0; i < n; ++i) {
      const BatchDraftCandidate& d = candidates[i];
      if (!d.adaptive) continue;
      const int step = k[i] == 0 ? d.min_tokens : 1;
      if (k[i] + step > d.cap) continue;
      double g = 0;
      for (int j = k[i] + 1; j <= k[i] + step; ++j) g += reach_of(d, j);
      const double dt = step * (per_row + d.drafting_per_draft);
      if (dt <= 0) continue;
      if (chosen < 0 || g / dt > best_ratio)
        chosen = static_cast<int>(i), gain = g, cost_of = dt, best_ratio = g / dt;
    }
    // A row pays when it gains more per second than the batch makes.
    if (chosen < 0 || best_ratio <= tokens / seconds()) break;
    const int step = k[chosen] == 0 ? candidates[chosen].min_tokens : 1;
    k[chosen] += step;
    rows += step;
    tokens += gain;
    extra += cost_of - step * per_row;
  }
  if (tokens / seconds() < DraftCostModel::kRequiredGain * plain_rate) return plain;
  return k;
}

std::vector<int> BatchDraftPlan::plan(std::span<const BatchDraftCandidate> candidates,
                                      int64_t other_rows, int64_t other_tokens) {
  std::vector<int> k = best(candidates, other_rows, other_tokens);
  bool drafting = false, probeable = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i].adaptive) continue;
    drafting |= k[i] > 0;
    probeable |= candidates[i].cap >= candidates[i].min_tokens;
  }
  if (drafting || !probeable || steps_ == 0) {
    zero_streak_ = 0;
    if (drafting) probe_interval_ = kFirstProbeInterval;
    return k;
  }
  // Drafting does not pay now: now and then one sequence, in turn, drafts
  // its shortest draft, so the acceptance the plan decides on stays measured
  // (less and less often while it keeps not paying, and within a budget).
  const BatchStepCost c = cost();
  const double plain = c.seconds(static_cast<double>(other_rows + std::ssize(candidates)));
  int64_t wait = probe_interval_;
  for (const BatchDraftCandidate& d : candidates)
    if (d.adaptive && plain > 0)
      wait = std::max(
          wait, static_cast<int64_t>(std::ceil(d.min_tokens * (c.per_row() + d.drafting_per_draft) /
                                               plain / kProbeBudget)));
  if (++zero_streak_ < wait) return k;
  zero_streak_ = 0;
  probe_interval_ = std::min(probe_interval_ * 2, kLastProbeInterval);
  for (size_t tried = 0; tried < candidates.size(); ++tried) {
    const size_t i = static_cast<size_t>(next_probe_++) % candidates.size();
    if (candidates[i].adaptive && candidates[i].cap >= candidates[i].min_tokens) {
      k[i] = candidates[i].min_tokens;
      ++probes_;
      break;
    }
  }
  return k;
}

void BatchDraftPlan::record(const BatchStepMeasurement& m) {
  if (m.prefill_rows > 0 || m.rows <= 0) return;
  ++steps_;
  const double r = static_cast<double>(m.rows);
  const double compute = std::max(0.0, m.seconds - m.read_seconds);
  const double x = static_cast<double>(m.experts);
  w_.add(1.0, kComputeDecay);
  sr_.add(r, kComputeDecay);
  srr_.add(r * r, kComputeDecay);
  sc_.add(compute, kComputeDecay);
  src_.add(r * compute, kComputeDecay);
  sx_.add(x, kComputeDecay);
  srx_.add(r * x, kComputeDecay);
  experts_.add(x, kMissDecay);
  misses_.add(static_cast<double>(m.misses), kMissDecay);
  if (m.misses > 0) {
    read_seconds_.add(m.read_seconds, kMissDecay);
    read_misses_.add(static_cast<double>(m.misses), kMissDecay);
  }
}

}  // namespace glmrt
