// The AVX-512 kernels object. Included by the portable entry point, so it
// names no SIMD types.
#pragma once

#include <glmrt/plugin/kernels.h>

namespace avx512_example {

struct Options {
  bool use_vnni = false;  // int8 and int4 weights against int8 activations with VPDPBUSD
};

/// Call only on a CPU the probe accepted; `host` must outlive the object.
/// Returns nullptr when out of memory.
glmrt::plugin::Kernels* make_avx512_kernels(const glmrt_host_services& host,
                                            const Options& options);

}  // namespace avx512_example
