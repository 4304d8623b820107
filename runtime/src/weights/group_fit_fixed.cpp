#include "group_fit_fixed.h"

#include "group_fit_fixed_kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace glmrt {
namespace {

using namespace fixed_kernels;

// x, a16 and ax of one group: on the stack for groups up to kLocal values,
// else per thread (groups may be as large as a profile allows).
class FixedScratch {
 public:
  explicit FixedScratch(size_t n) : capacity_(fixed_capacity(n)) {
    if (capacity_ <= kLocal) {
      for (int k = 0; k < 3; ++k) buffers_[k] = local_[k];
      return;
    }
    thread_local std::vector<int16_t> spill[3];
    for (int k = 0; k < 3; ++k) {
      spill[k].resize(capacity_);
      buffers_[k] = spill[k].data();
    }
  }
  FixedScratch(const FixedScratch&) = delete;  // buffers_ may point into local_
  FixedScratch& operator=(const FixedScratch&) = delete;
  size_t capacity() const { return capacity_; }
  int16_t* x() { return buffers_[0]; }
  int16_t* a16() { return buffers_[1]; }
  int16_t* ax() { return buffers_[2]; }

 private:
  static constexpr size_t kLocal = 256;
  size_t capacity_;
  int16_t* buffers_[3];
  alignas(64) int16_t local_[3][kLocal];
};

}  // namespace

namespace fixed_kernels {

// The whole group: the specification and every vector backend share each
// decision, only the pieces differ.
float quantize_fixed_on(const FixedBackend& backend, std::span<const float> w,
                        std::span<const float> a, const int16_t (&t)[kFixedCandidates], int qmin,
                        int qmax, signed char* q) {
  const float m = backend.signed_extreme(w);
  // All zero (or not finite: the loader refuses those before this point).
  if (!(std::fabs(m) > 0.f) || !std::isfinite(m)) {
    std::fill_n(q, w.size(), static_cast<signed char>(0));
    return 1e-8f;
  }
  if (!a.empty() && std::all_of(a.begin(), a.end(), [](float v) { return v == 0.f; })) a = {};
  const float scale = static_cast<float>(kFixedOne) / m;
  FixedScratch scratch(w.size());
  int16_t* x = scratch.x();
  backend.to_fixed(w, scale, x, scratch.capacity());
  const bool weighted = !a.empty();
  if (weighted) backend.weights_to_fixed(a, x, scratch.a16(), scratch.ax(), scratch.capacity());
  const FixedFit best = weighted
                            ? backend.fit(x, scratch.a16(), scratch.ax(), w.size(), t, qmin, qmax)
                            : backend.fit(x, nullptr, nullptr, w.size(), t, qmin, qmax);
  if (best.den <= 0) {
    std::fill_n(q, w.size(), static_cast<signed char>(0));
    return 1e-8f;
  }
  backend.codes(x, w.size(), t[best.lane], qmin, qmax, q);
  // num / den is in units of x = w * kFixedOne / m; weighted, ax carries a16 / 2^15.
  const double unit = static_cast<double>(m) / kFixedOne * (weighted ? 32768.0 : 1.0);
  const auto s =
      static_cast<float>(unit * static_cast<double>(best.num) / static_cast<double>(best.den));
  return s != 0.f ? s : 1e-8f;
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
  return quantize_fixed_on(fixed_backend(), w, a, t, qmin, qmax, q);
}

float quantize_fixed_scalar(std::span<const float> w, std::span<const float> a,
                            const int16_t (&t)[kFixedCandidates], int qmin, int qmax,
                            signed char* q) {
  return quantize_fixed_on(kScalarFixedBackend, w, a, t, qmin, qmax, q);
}

}  // namespace glmrt
