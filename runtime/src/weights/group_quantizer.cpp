#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>

#include <cmath>

namespace glmrt {
namespace {

// Candidate steps: d = m / (n + kStep * k) for k in [-kSteps, kSteps], with
// n = qmax (the max-abs value lands on +qmax) and n = -(qmax + 1) (it lands
// on the extra negative level). Ten tenths either way covers clipping up to
// ~15% of the range for int4, where the optimum usually lies.
constexpr int kSteps = 6;
constexpr float kStep = 0.15f;

struct Fit {
  double num = 0, den = 0;  // sum a w q, sum a q^2
  double gain() const { return den > 0 ? num * num / den : -1.0; }
};

Fit try_step(std::span<const float> w, std::span<const float> a, float inv, float qmin, float qmax,
             int8_t* q) {
  float num = 0.f, den = 0.f;
  const size_t n = w.size();
  if (a.empty()) {
    for (size_t i = 0; i < n; ++i) {
      float r = std::nearbyint(w[i] * inv);
      r = r < qmin ? qmin : r;
      r = r > qmax ? qmax : r;
      num += w[i] * r;
      den += r * r;
      q[i] = static_cast<int8_t>(r);
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      float r = std::nearbyint(w[i] * inv);
      r = r < qmin ? qmin : r;
      r = r > qmax ? qmax : r;
      num += a[i] * w[i] * r;
      den += a[i] * r * r;
      q[i] = static_cast<int8_t>(r);
    }
  }
  return {num, den};
}

}  // namespace

int packed_qmax(uint32_t type) {
  return type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : 1;
}

float quantize_group_searched(std::span<const float> w, std::span<const float> a, uint32_t type,
                              int8_t* q) {
  const int qmax = packed_qmax(type);
  float m = 0.f;  // the value of largest magnitude, signed
  for (float v : w)
    if (std::fabs(v) > std::fabs(m)) m = v;
  if (!(std::fabs(m) > 0.f) || !std::isfinite(m)) {
    // All zero (or not finite: the loader refuses those before this point).
    for (size_t i = 0; i < w.size(); ++i) q[i] = 0;
    return 1e-8f;
  }
  const float lo = static_cast<float>(-qmax - 1), hi = static_cast<float>(qmax);
  int8_t trial[4096];
  int8_t* scratch = w.size() <= sizeof(trial) ? trial : q;  // groups are at most 4096
  Fit best;
  float best_inv = 0.f;
  for (float n : {hi, lo}) {
    for (int k = -kSteps; k <= kSteps; ++k) {
      const float target = n + (n > 0 ? kStep : -kStep) * static_cast<float>(k);
      if (std::fabs(target) < 0.5f) continue;
      const float inv = target / m;
      const Fit f = try_step(w, a, inv, lo, hi, scratch);
      if (f.gain() > best.gain()) best = f, best_inv = inv;
    }
  }
  if (!(best.den > 0)) {
    for (size_t i = 0; i < w.size(); ++i) q[i] = 0;
    return 1e-8f;
  }
  try_step(w, a, best_inv, lo, hi, q);
  const float s = static_cast<float>(best.num / best.den);
  return s != 0.f ? s : 1e-8f;
}

}  // namespace glmrt
