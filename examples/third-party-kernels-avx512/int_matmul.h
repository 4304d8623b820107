// y = x . W^T for int8 and int4 weights with VNNI (VPDPBUSD) against the
// quantized activations of int_activations.h. Call only where the CPU has
// AVX-512 VNNI (or in the emulated build).
#pragma once

#include "int_activations.h"

#include <glmrt/plugin/host_services.h>
#include <glmrt/plugin/weight_format.h>

namespace avx512_example {

struct IntMatmul {
  const glmrt_weight_view* w;  // per-row scales, or groups that are whole blocks
  const IntActivations* x;
  /// Grouped formats: the weight group of each 32-input block of a step, for
  /// every block of x's steps (nullptr for one scale per row).
  const int32_t* block_group;
  int64_t S;
  float* y;  // [S, O]
};

/// Splits the output rows among the host's threads.
void int_matmul(const glmrt_host_services& host, const IntMatmul& problem);

}  // namespace avx512_example
