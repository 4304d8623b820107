// Factory of the AVX2 kernels object. This header is included by the portable
// entry point, so it names no SIMD types; the object itself lives in
// avx2_kernels.cpp, compiled with -mavx2 -mfma -mf16c.
#pragma once

#include "settings.h"

#include <glmrt/plugin/kernels.h>

#include <memory>

namespace glmrt::kernels_avx2 {

/// Deletes through destroy(), the only way the interface may be released.
struct KernelsDestroyer {
  void operator()(plugin::Kernels* kernels) const noexcept { kernels->destroy(); }
};
using KernelsPtr = std::unique_ptr<plugin::Kernels, KernelsDestroyer>;

/// The instruction-set paths a Kernels object takes (the same bits on each).
struct CpuPaths {
  /// The int and ggml dots' vpdpbusd builds: only where the CPU has AVX-VNNI.
  bool vnni = false;
  /// With vnni, the ggml lane kernels at 16 rows per zmm and the row kernels
  /// of q4_k, q2_k and iq4_xs at two rows per zmm: only where the CPU has
  /// AVX-512 F, BW, VL and VNNI.
  bool wide_lanes = false;
};

/// Call only on a CPU the probe accepted, with `paths` it has. `host` must
/// outlive the object.
KernelsPtr make_avx2_kernels(const glmrt_host_services& host, const Settings& settings,
                             CpuPaths paths);

}  // namespace glmrt::kernels_avx2
