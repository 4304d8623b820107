// What the CPU glmrt runs on offers beyond baseline x86-64. The core is
// compiled for the baseline, so one binary runs on any x86-64; its few hot
// loops that gain from a newer instruction set have a variant compiled for
// it, chosen from these flags at run time (kv/row_math_avx2.cpp,
// weights/group_fit_fixed_avx2.cpp and _avx512.cpp, weights/row_codec.cpp).
// Everything else ISA-specific lives in plugins, whose probes check their
// own needs.
#pragma once

#include <atomic>

namespace glmrt {

struct CpuFeatures {
  /// AVX2 and FMA (and the OS saves the ymm registers).
  bool avx2_fma = false;
  /// AVX-512 F, BW, DQ, VL and VNNI (and the OS saves the zmm registers).
  bool avx512 = false;
};

/// This CPU's features, detected on the first call and cached.
const CpuFeatures& cpu_features();

/// The variant `choose` picks from cpu_features(), chosen on the first get()
/// and then read with one plain load. Define it constinit at namespace scope,
/// in the file whose functions dispatch: in front of a 40 ns kernel, a
/// function-local static (a guard check, and the caller's registers saved
/// around it) cost ~10% more. Threads racing to the first get() all store
/// the same pointer.
template <class Variant>
class ChosenVariant {
 public:
  explicit constexpr ChosenVariant(const Variant& (*choose)()) : choose_(choose) {}
  ChosenVariant(const ChosenVariant&) = delete;
  ChosenVariant& operator=(const ChosenVariant&) = delete;

  const Variant& get() {
    const Variant* v = chosen_.load(std::memory_order_relaxed);
    return v ? *v : first_get();
  }

 private:
  [[gnu::noinline]] const Variant& first_get() {
    const Variant& v = choose_();
    chosen_.store(&v, std::memory_order_relaxed);
    return v;
  }

  const Variant& (*choose_)();
  std::atomic<const Variant*> chosen_{nullptr};
};

}  // namespace glmrt

/// A function compiled for one of the feature sets above, in a core built for
/// baseline x86-64: call it only where the matching flag is set. Attributes,
/// not per-file flags, so the inline library code such a file instantiates
/// (and the linker may share with other files) stays baseline.
#define GLMRT_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#define GLMRT_TARGET_AVX512 \
  __attribute__((target("avx2,fma,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
