#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "group_fit_lanes.h"

namespace glmrt {
namespace {

// StepCandidate steps: d = m / (n + kStep * k) for k in [-kSteps, kSteps], with
// n = qmax (the max-abs value lands on +qmax) and n = -(qmax + 1) (it lands
// on the extra negative level): 26 candidates covering n +- 0.9, which for
// int4 clips up to ~11% of the range, where the optimum usually lies.
constexpr int kSteps = 6;
constexpr float kStep = 0.15f;

struct StepCandidate {  // members set together by add()
  float n = 0.f;        // the family: hi or lo
  int k = 0;
  float inv = 0.f;  // 1 / step
};

void codes_for(std::span<const float> w, float inv, float qmin, float qmax, int8_t* q) {
  for (size_t i = 0; i < w.size(); ++i) {
    float r = std::nearbyint(w[i] * inv);
    r = r < qmin ? qmin : r;
    r = r > qmax ? qmax : r;
    q[i] = static_cast<int8_t>(r);
  }
}

// The search itself, generic over the lane backend so the scalar one (the
// specification every vector backend must match bit for bit) and the
// compiled-in vector one share every decision.
template <typename FitBatch>
float search_group_scale(std::span<const float> w, std::span<const float> a, uint32_t type,
                         int8_t* q, FitBatch fit_batch) {
  const int qmax = packed_qmax(type);
  float amax = 0.f;
#pragma omp simd reduction(max : amax)
  for (size_t i = 0; i < w.size(); ++i) amax = std::max(amax, std::fabs(w[i]));
  float m = amax;  // the value of largest magnitude, signed
  for (float v : w)
    if (std::fabs(v) == amax) {
      m = v;
      break;
    }
  if (!(std::fabs(m) > 0.f) || !std::isfinite(m)) {
    // All zero (or not finite: the loader refuses those before this point).
    for (size_t i = 0; i < w.size(); ++i) q[i] = 0;
    return 1e-8f;
  }
  // A group no calibration token reached (all importances 0) would fit
  // nothing and come out as zeros: it is quantized unweighted instead.
  if (!a.empty() && std::all_of(a.begin(), a.end(), [](float v) { return v == 0.f; })) a = {};
  const float lo = static_cast<float>(-qmax - 1), hi = static_cast<float>(qmax);
  GroupFit best;
  double best_gain = best.gain();
  StepCandidate chosen{hi, 0, 0.f};
  // Filled before read: left uninitialised (zeroing them showed in profiles).
  constexpr size_t kMaxBatch = 2 * (2 * kSteps + 1);
  StepCandidate batch[kMaxBatch];
  float invs[kMaxBatch];
  GroupFit fits[kMaxBatch];
  size_t count = 0;
  const auto add = [&](float n, int k) {
    const float target = n + (n > 0 ? kStep : -kStep) * static_cast<float>(k);
    if (std::fabs(target) < 0.5f) return;
    batch[count] = {n, k, target / m};
    invs[count] = batch[count].inv;
    ++count;
  };
  // Every candidate of a batch is fitted in one call (the group stays in
  // registers, the candidates' sums overlap), then compared in the order
  // added, ties keeping the earlier: the choice of one fit at a time.
  const auto run = [&] {
    fit_batch(w, a, std::span<const float>(invs, count), lo, hi, fits);
    for (size_t c = 0; c < count; ++c) {
      const double gain = fits[c].gain();
      if (gain > best_gain) best = fits[c], best_gain = gain, chosen = batch[c];
    }
    count = 0;
  };
  add(hi, 0);  // the max-abs codes: the result is never worse than them
  // int8's 256 levels leave clipping nothing to gain (and its candidates'
  // errors differ by less than float rounding): the max-abs codes, refit.
  if (type != GLMRT_I8) {
    // Coarse to fine: every third step of both families, then the steps
    // beside the best (10 + 4 fits instead of 26, the same choice almost always).
    for (float n : {hi, lo})
      for (int k = -kSteps; k <= kSteps; k += 3)
        if (n != hi || k != 0) add(n, k);
    run();
    const StepCandidate around = chosen;
    for (int d : {-2, -1, 1, 2})
      if (around.k + d >= -kSteps && around.k + d <= kSteps) add(around.n, around.k + d);
  }
  run();
  if (!(best.den > 0)) {
    for (size_t i = 0; i < w.size(); ++i) q[i] = 0;
    return 1e-8f;
  }
  codes_for(w, chosen.inv, lo, hi, q);
  const float s = static_cast<float>(best.num / best.den);
  return s != 0.f ? s : 1e-8f;
}

}  // namespace

int packed_qmax(uint32_t type) {
  return type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : 1;
}

float quantize_group_searched(std::span<const float> w, std::span<const float> a, uint32_t type,
                              int8_t* q) {
  return search_group_scale(w, a, type, q, fit_group_lanes);
}

float quantize_group_searched_scalar(std::span<const float> w, std::span<const float> a,
                                     uint32_t type, int8_t* q) {
  return search_group_scale(w, a, type, q, fit_group_lanes_scalar);
}

const char* group_fit_backend() {
  return kGroupFitBackend;
}

}  // namespace glmrt
