// When a kernels call is worth the host's OpenMP team. The host runs its
// threads with OMP_WAIT_POLICY=passive, so an idle thread sleeps and every
// parallel region pays a wake-up (7-30 us measured on a 2-core virtual
// machine); at 1 << 16 the demo model's decode spent 45% of its compute
// waking the team. The core keeps its own figure for its own loops
// (runtime's base/parallel_work.h): plugins never include core headers.
#pragma once

#include <cstdint>

namespace glmrt::plugin_support {

/// Multiply-adds (all products of a call) below which a call runs on the
/// calling thread: ~1 MB of int8 weights.
inline constexpr int64_t kMinParallelMultiplyAdds = int64_t{1} << 20;

}  // namespace glmrt::plugin_support
