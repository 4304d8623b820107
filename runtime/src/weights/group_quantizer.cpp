#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "group_fit_lanes.h"

namespace glmrt {
namespace {

// Candidate steps: d = m / t with t = n + kStep * k (away from zero: the
// value of largest magnitude m lands past the last level and is clipped), for
// k in {0, 2, 4, 6}, in both families n = qmax (m lands on +qmax) and
// n = -(qmax + 1) (m lands on the extra negative level of two's complement):
// 8 candidates, one register of lanes. On trained, Gaussian and Student-t
// groups of 64 at int4 they reach the squared error of the 26-step grid
// (k in [-6, 6]) within 0.4%, at half the cost of 16 (docs/convert.md).
constexpr int kSteps[] = {0, 2, 4, 6};
constexpr float kStep = 0.15f;

// The targets t of one packed type, lane 0 the max-abs step (t = qmax): ties
// keep the earlier lane, so a group is never worse than the max-abs codes
// (refit). int8's 256 levels leave clipping nothing to gain (its candidates'
// errors differ by less than float rounding): every lane holds t = qmax.
struct StepTargets {
  float t[kFitCandidates];
};

StepTargets targets_of(uint32_t type) {
  const float hi = static_cast<float>(packed_qmax(type)), lo = -hi - 1.f;
  StepTargets targets;
  std::fill_n(targets.t, kFitCandidates, hi);
  if (type == GLMRT_I8) return targets;
  size_t count = 0;
  for (float n : {hi, lo})
    for (int k : kSteps) targets.t[count++] = n + (n > 0 ? kStep : -kStep) * static_cast<float>(k);
  return targets;
}

const StepTargets& step_targets(uint32_t type) {
  static const StepTargets i8 = targets_of(GLMRT_I8), i4 = targets_of(GLMRT_I4),
                           i2 = targets_of(GLMRT_I2);
  return type == GLMRT_I8 ? i8 : type == GLMRT_I4 ? i4 : i2;
}

// The search itself, generic over the lane backend so the scalar one (the
// specification every vector backend must match bit for bit) and the
// compiled-in vector one share every decision.
template <typename FitLanes>
GroupStep search_step(std::span<const float> w, std::span<const float> a, uint32_t type,
                      FitLanes fit_lanes) {
  const float m = largest_magnitude(w);  // signed
  // All zero (or not finite: the loader refuses those before this point).
  if (!(std::fabs(m) > 0.f) || !std::isfinite(m)) return {0.f, 1e-8f};
  // A group no calibration token reached (all importances 0) would fit
  // nothing and come out as zeros: it is quantized unweighted instead.
  if (!a.empty() && std::all_of(a.begin(), a.end(), [](float v) { return v == 0.f; })) a = {};
  const float hi = static_cast<float>(packed_qmax(type)), lo = -hi - 1.f;
  const StepTargets& targets = step_targets(type);
  float invs[kFitCandidates];
  for (size_t c = 0; c < kFitCandidates; ++c) invs[c] = targets.t[c] / m;
  const BestFit best = fit_lanes(w, a, invs, lo, hi);
  if (!(best.den > 0)) return {0.f, 1e-8f};
  const float s = static_cast<float>(best.num / best.den);
  return {invs[best.lane], s != 0.f ? s : 1e-8f};
}

float code_limit(uint32_t type) {
  return static_cast<float>(packed_qmax(type));
}

}  // namespace

int packed_qmax(uint32_t type) {
  return type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : 1;
}

GroupStep search_group_step(std::span<const float> w, std::span<const float> a, uint32_t type) {
  return search_step(w, a, type, fit_group_lanes);
}

void group_codes(std::span<const float> w, GroupStep step, uint32_t type, int8_t* q) {
  const float hi = code_limit(type);
  codes_for_step(w, step.inv, -hi - 1.f, hi, reinterpret_cast<signed char*>(q));
}

void row_group_codes(std::span<const float> w, size_t group, std::span<const GroupStep> steps,
                     uint32_t type, int8_t* q) {
  thread_local std::vector<float> invs;
  invs.resize(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) invs[k] = steps[k].inv;
  const float hi = code_limit(type);
  row_codes_for_steps(w, group, invs, -hi - 1.f, hi, reinterpret_cast<signed char*>(q));
}

float quantize_group_searched(std::span<const float> w, std::span<const float> a, uint32_t type,
                              int8_t* q) {
  const GroupStep step = search_group_step(w, a, type);
  group_codes(w, step, type, q);
  return step.scale;
}

float quantize_group_searched_scalar(std::span<const float> w, std::span<const float> a,
                                     uint32_t type, int8_t* q) {
  const GroupStep step = search_step(w, a, type, fit_group_lanes_scalar);
  const float hi = code_limit(type);
  codes_for_step_scalar(w, step.inv, -hi - 1.f, hi, reinterpret_cast<signed char*>(q));
  return step.scale;
}

const char* group_fit_backend() {
  return kGroupFitBackend;
}

}  // namespace glmrt
