#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>

#include <algorithm>
#include <cmath>

#include "group_fit_fixed.h"
#include "round_small.h"

namespace glmrt {
namespace {

// Candidate targets t / 8 (in steps of the signed extreme m, which lands past
// the last level and is clipped), t = round(8 (n + 0.15 k)) for k in
// {0, 2, 4, 6}, in both families n = qmax (m lands on +qmax) and
// n = -(qmax + 1) (m lands on the extra negative level of two's complement,
// the 0.15 k going away from zero): 8 candidates, one register of lanes.
// Lane 0 is the max-abs step and ties keep the earlier lane, so a group is
// never worse than the max-abs codes (refit). On Gaussian and Student-t
// groups of 64 they come within 0.5% of the squared error of the 26-step grid
// (k in [-6, 6]) at int4 and int2 (docs/convert.md).
constexpr int kSteps[] = {0, 2, 4, 6};
constexpr float kStep = 0.15f;

struct FixedTargets {
  int16_t t[kFixedCandidates];
};

FixedTargets targets_of(uint32_t type) {
  const float hi = static_cast<float>(packed_qmax(type)), lo = -hi - 1.f;
  FixedTargets targets;
  size_t count = 0;
  for (float n : {hi, lo})
    for (int k : kSteps)
      targets.t[count++] = static_cast<int16_t>(std::nearbyint(
          kTargetDenominator * (n + (n > 0 ? kStep : -kStep) * static_cast<float>(k))));
  return targets;
}

const FixedTargets& fixed_targets(uint32_t type) {
  static const FixedTargets i4 = targets_of(GLMRT_I4), i3 = targets_of(GLMRT_I3),
                            i2 = targets_of(GLMRT_I2);
  return type == GLMRT_I4 ? i4 : type == GLMRT_I3 ? i3 : i2;
}

// int8: 256 levels leave clipping nothing to gain (candidates' errors differ
// by less than float rounding), so the codes are the max-abs ones and only
// the scale is refitted, s = sum a w q / sum a q^2, in double one value at a
// time (every backend runs this same loop).
float quantize_int8_group(std::span<const float> w, std::span<const float> a, float m, int8_t* q) {
  if (!(std::fabs(m) > 0.f) || !std::isfinite(m)) {
    std::fill_n(q, w.size(), int8_t{0});
    return 1e-8f;
  }
  if (!a.empty() && std::all_of(a.begin(), a.end(), [](float v) { return v == 0.f; })) a = {};
  const float inv = static_cast<float>(packed_qmax(GLMRT_I8)) / m;
  double num = 0, den = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const float r = std::clamp(round_small(w[i] * inv), -128.f, 127.f);  // |w| <= |m|
    q[i] = static_cast<int8_t>(r);
    const double weight = a.empty() ? 1.0 : a[i];
    num += weight * w[i] * r;
    den += weight * r * r;
  }
  const auto s = static_cast<float>(den > 0 ? num / den : 0.0);
  return s != 0.f ? s : 1e-8f;
}

}  // namespace

int packed_qmax(uint32_t type) {
  return type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : type == GLMRT_I3 ? 3 : 1;
}

float quantize_group_searched(std::span<const float> w, std::span<const float> a, uint32_t type,
                              int8_t* q) {
  if (type == GLMRT_I8) return quantize_int8_group(w, a, signed_extreme(w), q);
  const int hi = packed_qmax(type);
  return quantize_fixed(w, a, fixed_targets(type).t, -hi - 1, hi,
                        reinterpret_cast<signed char*>(q));
}

float quantize_group_searched_scalar(std::span<const float> w, std::span<const float> a,
                                     uint32_t type, int8_t* q) {
  if (type == GLMRT_I8) return quantize_int8_group(w, a, signed_extreme_scalar(w), q);
  const int hi = packed_qmax(type);
  return quantize_fixed_scalar(w, a, fixed_targets(type).t, -hi - 1, hi,
                               reinterpret_cast<signed char*>(q));
}

const char* group_fit_backend() {
  return fixed_fit_backend();
}

}  // namespace glmrt
