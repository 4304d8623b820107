#include <glmrt/base/error.h>
#include <glmrt/draft/draft_cost_model.h>

#include "draft_tuning.h"

#include <algorithm>
#include <cmath>

namespace glmrt {
namespace {
using namespace draft_tuning;
}  // namespace

double DraftCostEstimate::tokens(int k) const {
  double total = 1.0, reach = 1.0;
  for (int j = 0; j < k && j < static_cast<int>(acceptance.size()); ++j) {
    reach *= acceptance[j];
    total += reach;
  }
  return total;
}

double DraftCostEstimate::seconds(int k) const {
  return compute_base + compute_per_draft * k +
         (experts_per_position + experts_per_draft * k) * miss_rate * read_seconds_per_miss +
         drafting_per_draft * k;
}

double DraftCostEstimate::tokens_per_second(int k) const {
  const double s = seconds(k);
  return s > 0 ? tokens(k) / s : 0.0;
}

DraftCostModel::DraftCostModel(DraftPolicy policy, int64_t experts_per_position,
                               int64_t drafter_experts_per_draft)
    : policy_(policy),
      experts_per_position_(static_cast<double>(experts_per_position)),
      drafter_experts_per_draft_(static_cast<double>(drafter_experts_per_draft)),
      reached_(policy.max_tokens),
      accepted_(policy.max_tokens),
      chosen_(policy.max_tokens + 1, 0) {
  if (policy.max_tokens < 1 || policy.min_tokens < 1 || policy.min_tokens > policy.max_tokens)
    fail("draft policy: draft_min_tokens {} and max_draft_tokens {} need 1 <= min <= max",
         policy.min_tokens, policy.max_tokens);
}

DraftCostEstimate DraftCostModel::estimate() const {
  DraftCostEstimate e;
  // A prior worth two observations: 1/2 for the first position, and for each
  // later one the estimate of the position before it (a draft that follows an
  // accepted one is accepted about as often as it was). With a flat 1/2 for
  // every untried position, a drafter that is always right climbed one
  // position per neighbour probe, 16 steps apart.
  double prior = 0.5;
  for (int j = 0; j < policy_.max_tokens; ++j) {
    prior = (accepted_[j].value + 2.0 * prior) / (reached_[j].value + 2.0);
    e.acceptance.push_back(prior);
  }
  if (w_.value > 0) {
    const double mean_k = sk_.value / w_.value, mean_c = sc_.value / w_.value;
    const double variance = skk_.value / w_.value - mean_k * mean_k;
    if (variance > kMinRowVariance && steps_ >= 3) {
      e.compute_per_draft = (skc_.value / w_.value - mean_k * mean_c) / variance;
      e.compute_base = mean_c - e.compute_per_draft * mean_k;
    }
    if (e.compute_base <= 0 || e.compute_per_draft < kMinComputePerRow * e.compute_base) {
      const double share =
          e.compute_base > 0 ? kMinComputePerRow : kPriorComputePerRow;  // no usable fit
      e.compute_base = mean_c / (1.0 + share * mean_k);
      e.compute_per_draft = share * e.compute_base;
    }
  }
  e.experts_per_position = experts_per_position_;
  e.experts_per_draft = extra_drafts_.value > 0 ? extra_experts_.value / extra_drafts_.value
                                                : kPriorExtraExpertShare * experts_per_position_;
  e.miss_rate = experts_.value > 0 ? misses_.value / experts_.value : 0.0;
  e.read_seconds_per_miss = read_misses_.value > 0 ? read_seconds_.value / read_misses_.value : 0.0;
  // Before the drafter ran: what reading its experts would cost at the
  // current miss rate (its compute unknown, so a lower bound).
  e.drafting_per_draft = drafting_requested_.value > 0
                             ? drafting_seconds_.value / drafting_requested_.value
                             : drafter_experts_per_draft_ * e.miss_rate * e.read_seconds_per_miss;
  return e;
}

int DraftCostModel::explorable(int limit) const {
  // One position past the deepest one measured: longer drafts are tried one
  // position at a time (each extra position can pull its own experts from
  // disk, too costly to guess at).
  int measured = 0;
  while (measured < policy_.max_tokens && reached_[measured].value > 0) ++measured;
  const int cap = std::min({limit, policy_.max_tokens, std::max(policy_.min_tokens, measured + 1)});
  return cap < policy_.min_tokens ? 0 : cap;
}

int DraftCostModel::best(int limit) const {
  const int cap = explorable(limit);
  if (cap == 0) return 0;
  const DraftCostEstimate e = estimate();
  if (e.seconds(0) <= 0) return cap;  // nothing measured yet
  int best_k = 0;
  double best_rate = e.tokens_per_second(0) * kRequiredGain;
  for (int k = policy_.min_tokens; k <= cap; ++k) {
    const double rate = e.tokens_per_second(k);
    if (rate > best_rate) best_k = k, best_rate = rate;
  }
  return best_k;
}

int64_t DraftCostModel::probe_wait() const {
  const DraftCostEstimate e = estimate();
  const double plain = e.seconds(0);
  if (plain <= 0) return probe_interval_;
  const double extra = std::max(0.0, e.seconds(policy_.min_tokens) / plain - 1.0);
  return std::max(probe_interval_, static_cast<int64_t>(std::ceil(extra / kProbeBudget)));
}

int DraftCostModel::record_choice(int k) {
  ++chosen_.at(k);
  return k;
}

int DraftCostModel::choose(int limit) {
  const int cap = std::min(limit, policy_.max_tokens);
  if (cap < policy_.min_tokens) return record_choice(0);
  if (!policy_.adaptive) return record_choice(cap);
  // First a step without drafts: the cost of a plain step, the miss rate and
  // the read time. From then on the priors (acceptance 1/2, an extra position
  // costing 20% of a step's compute and 80% of a position's experts, the
  // drafter its own experts) decide until measurements replace them: where
  // those say drafting cannot pay (streaming with a small cache), the first
  // probe waits like any other, and a short answer is never slowed by it.
  if (steps_ == 0) return record_choice(0);
  ++decisions_;
  const int k = best(limit);
  if (k == 0) {
    // Drafting does not pay now; look again after a while, less and less
    // often while it keeps not paying.
    if (++zero_streak_ < probe_wait()) return record_choice(0);
    zero_streak_ = 0;
    probe_interval_ = std::min(probe_interval_ * 2, kLastProbeInterval);
    ++probes_;
    return record_choice(policy_.min_tokens);
  }
  zero_streak_ = 0;
  probe_interval_ = kFirstProbeInterval;
  if (decisions_ % kNeighbourEvery == 0) {
    // A neighbouring length now and then keeps the compute fit's slope and
    // the next position's acceptance measured.
    const bool longer = (decisions_ / kNeighbourEvery) % 2 == 1;
    const int neighbour = std::clamp(longer ? k + 1 : k - 1, policy_.min_tokens, cap);
    if (neighbour != k) {
      ++probes_;
      return record_choice(neighbour);
    }
  }
  return record_choice(k);
}

void DraftCostModel::record_verification(const VerifyMeasurement& m) {
  ++steps_;
  const double k = m.drafts;
  const double compute = std::max(0.0, m.seconds - m.read_seconds);
  w_.add(1.0, kComputeDecay);
  sk_.add(k, kComputeDecay);
  skk_.add(k * k, kComputeDecay);
  sc_.add(compute, kComputeDecay);
  skc_.add(k * compute, kComputeDecay);
  experts_.add(static_cast<double>(m.experts), kMissDecay);
  misses_.add(static_cast<double>(m.misses), kMissDecay);
  if (m.misses > 0) {
    read_seconds_.add(m.read_seconds, kMissDecay);
    read_misses_.add(static_cast<double>(m.misses), kMissDecay);
  }
  if (m.drafts > 0) {
    extra_experts_.add(std::max(0.0, static_cast<double>(m.experts) - experts_per_position_),
                       kComputeDecay);
    extra_drafts_.add(k, kComputeDecay);
  }
  record_acceptance(m.drafts, m.accepted);
}

void DraftCostModel::record_acceptance(int drafts, int accepted) {
  // Draft j was judged when every draft before it was accepted.
  for (int j = 0; j < drafts && j <= accepted && j < policy_.max_tokens; ++j) {
    reached_[j].add(1.0, kAcceptanceDecay);
    accepted_[j].add(j < accepted ? 1.0 : 0.0, kAcceptanceDecay);
  }
}

void DraftCostModel::record_shadow(double acceptance) {
  reached_[0].add(1.0, kAcceptanceDecay);
  accepted_[0].add(std::clamp(acceptance, 0.0, 1.0), kAcceptanceDecay);
}

void DraftCostModel::record_drafting(const DraftingMeasurement& m) {
  drafting_seconds_.add(m.seconds, kDraftingDecay);
  drafting_requested_.add(static_cast<double>(m.requested), kDraftingDecay);
}

}  // namespace glmrt
