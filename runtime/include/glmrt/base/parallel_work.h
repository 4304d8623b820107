// When a piece of work is worth the OpenMP team. glmrt runs its OpenMP
// threads with OMP_WAIT_POLICY=passive (base/omp_wait_policy.h), so an idle
// thread sleeps and every parallel region pays a wake-up: 7-30 us measured on
// a 2-core virtual machine (an empty region, sleeping worker). A decode step
// of a small model (the demo: hidden 128) is hundreds of such regions, and
// splitting them made its compute 1.65x slower than one thread. Work below
// these sizes runs on the calling thread; every split is row- or key-wise, so
// the bits do not depend on it.
#pragma once

#include <cstdint>

namespace glmrt {

/// Multiply-adds (matmul rows x columns, keys x head width) below which a
/// product runs on one thread: ~1 MB of int8 weights, tens of microseconds.
inline constexpr int64_t kMinParallelMultiplyAdds = int64_t{1} << 20;

/// Values decoded and re-packed (an expert matrix converted at load) below
/// which one thread converts them: at ~1 ns a value, ~30 us.
inline constexpr int64_t kMinParallelConvertedValues = int64_t{1} << 15;

/// The team for `work` units given a minimum worth splitting.
inline int team_for(int64_t work, int64_t minimum, int threads) {
  return work >= minimum && threads > 1 ? threads : 1;
}

}  // namespace glmrt
