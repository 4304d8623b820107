// Which fixed-point search backend runs: the fastest this CPU has. All return
// the specification's results bit for bit, so the choice changes only speed.
#include <glmrt/base/cpu_features.h>

#include <vector>

#include "group_fit_fixed_group.h"

namespace glmrt::fixed_kernels {
namespace scalar {
namespace {

float signed_extreme(std::span<const float> w) {
  return signed_extreme_of_values(w);
}

FixedFit fit(const int16_t* x, const int16_t* a16, const int16_t* ax, size_t n,
             const int16_t (&t)[kFixedCandidates], int qmin, int qmax) {
  return a16 ? fit_fixed_scalar<true>(x, a16, ax, n, t, qmin, qmax)
             : fit_fixed_scalar<false>(x, nullptr, nullptr, n, t, qmin, qmax);
}

float quantize(std::span<const float> w, std::span<const float> a,
               const int16_t (&t)[kFixedCandidates], int qmin, int qmax, signed char* q) {
  return quantize_group<signed_extreme, to_fixed_scalar, weights_to_fixed_scalar, fit,
                        codes_fixed_scalar>(w, a, t, qmin, qmax, q);
}

}  // namespace
}  // namespace scalar

const FixedBackend kScalarFixedBackend = {"scalar", scalar::signed_extreme, scalar::quantize};

std::span<const FixedBackend* const> runnable_fixed_backends() {
  static const std::vector<const FixedBackend*> backends = [] {
    std::vector<const FixedBackend*> found;
    if (cpu_features().avx512) found.push_back(&kAvx512FixedBackend);
    if (cpu_features().avx2_fma) found.push_back(&kAvx2FixedBackend);
    found.push_back(&kScalarFixedBackend);
    return found;
  }();
  return backends;
}

}  // namespace glmrt::fixed_kernels
