#include "group_fit_fixed.h"

#include <glmrt/base/cpu_features.h>

#include "group_fit_fixed_kernels.h"

namespace glmrt {

using namespace fixed_kernels;

namespace fixed_kernels {
namespace {

const FixedBackend& choose() {
  return *runnable_fixed_backends().front();
}

constinit ChosenVariant<FixedBackend> chosen{&choose};

}  // namespace

const FixedBackend& fixed_backend() {
  return chosen.get();
}

}  // namespace fixed_kernels

const char* fixed_fit_backend() {
  return fixed_backend().name;
}

float signed_extreme(std::span<const float> w) {
  return fixed_backend().signed_extreme(w);
}

float signed_extreme_scalar(std::span<const float> w) {
  return signed_extreme_of_values(w);
}

float quantize_fixed(std::span<const float> w, std::span<const float> a,
                     const int16_t (&t)[kFixedCandidates], int qmin, int qmax, signed char* q) {
  return fixed_backend().quantize(w, a, t, qmin, qmax, q);
}

float quantize_fixed_scalar(std::span<const float> w, std::span<const float> a,
                            const int16_t (&t)[kFixedCandidates], int qmin, int qmax,
                            signed char* q) {
  return kScalarFixedBackend.quantize(w, a, t, qmin, qmax, q);
}

}  // namespace glmrt
