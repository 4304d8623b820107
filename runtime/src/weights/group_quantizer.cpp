#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>

#include <algorithm>
#include <cmath>

namespace glmrt {
namespace {

// Candidate steps: d = m / (n + kStep * k) for k in [-kSteps, kSteps], with
// n = qmax (the max-abs value lands on +qmax) and n = -(qmax + 1) (it lands
// on the extra negative level): 26 candidates covering n +- 0.9, which for
// int4 clips up to ~11% of the range, where the optimum usually lies.
constexpr int kSteps = 6;
constexpr float kStep = 0.15f;

struct Fit {
  double num = 0, den = 0;  // sum a w q, sum a q^2
  double gain() const { return den > 0 ? num * num / den : -1.0; }
};

// The fit of step 1/inv: sums over the group in float lanes the compiler
// vectorizes (omp simd: the reduction may be reordered). Float is enough to
// rank int4/int2 candidates, whose errors differ by far more than its
// rounding; int8 takes the max-abs codes alone (see quantize_group_searched).
template <bool kWeighted>
Fit try_step(const float* w, const float* a, size_t n, float inv, float qmin, float qmax) {
  float num = 0.f, den = 0.f;
#pragma omp simd reduction(+ : num, den)
  for (size_t i = 0; i < n; ++i) {
    float r = std::nearbyint(w[i] * inv);
    r = r < qmin ? qmin : r;
    r = r > qmax ? qmax : r;
    const float weight = kWeighted ? a[i] : 1.f;
    num += weight * w[i] * r;
    den += weight * r * r;
  }
  return {num, den};
}

void codes_for(std::span<const float> w, float inv, float qmin, float qmax, int8_t* q) {
  for (size_t i = 0; i < w.size(); ++i) {
    float r = std::nearbyint(w[i] * inv);
    r = r < qmin ? qmin : r;
    r = r > qmax ? qmax : r;
    q[i] = static_cast<int8_t>(r);
  }
}

}  // namespace

int packed_qmax(uint32_t type) {
  return type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : 1;
}

float quantize_group_searched(std::span<const float> w, std::span<const float> a, uint32_t type,
                              int8_t* q) {
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
  const float lo = static_cast<float>(-qmax - 1), hi = static_cast<float>(qmax);
  Fit best;
  float best_inv = 0.f, best_n = hi;
  int best_k = 0;
  const auto consider = [&](float n, int k) {
    const float target = n + (n > 0 ? kStep : -kStep) * static_cast<float>(k);
    if (std::fabs(target) < 0.5f) return;
    const float inv = target / m;
    const Fit f = a.empty() ? try_step<false>(w.data(), nullptr, w.size(), inv, lo, hi)
                            : try_step<true>(w.data(), a.data(), w.size(), inv, lo, hi);
    if (f.gain() > best.gain()) best = f, best_inv = inv, best_n = n, best_k = k;
  };
  consider(hi, 0);  // the max-abs codes: the result is never worse than them
  // int8's 256 levels leave clipping nothing to gain (and its candidates'
  // errors differ by less than float rounding): the max-abs codes, refit.
  if (type != GLMRT_I8) {
    // Coarse to fine: every third step of both families, then the steps
    // beside the best (10 + 4 fits instead of 26, the same choice almost always).
    for (float n : {hi, lo})
      for (int k = -kSteps; k <= kSteps; k += 3)
        if (n != hi || k != 0) consider(n, k);
    const float n = best_n;
    const int k = best_k;
    for (int d : {-2, -1, 1, 2})
      if (k + d >= -kSteps && k + d <= kSteps) consider(n, k + d);
  }
  if (!(best.den > 0)) {
    for (size_t i = 0; i < w.size(); ++i) q[i] = 0;
    return 1e-8f;
  }
  codes_for(w, best_inv, lo, hi, q);
  const float s = static_cast<float>(best.num / best.den);
  return s != 0.f ? s : 1e-8f;
}

}  // namespace glmrt
