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

/// Call only on a CPU the probe accepted, with `vnni` only where it has
/// AVX-VNNI (the int and ggml dots' vpdpbusd builds). `host` must outlive the object.
KernelsPtr make_avx2_kernels(const glmrt_host_services& host, const Settings& settings, bool vnni);

}  // namespace glmrt::kernels_avx2
