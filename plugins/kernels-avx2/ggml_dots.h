// The int8-activation kernels of ggml blocks (ggml_dot_kernels.h), in their
// two builds: ggml_dots (AVX2's maddubs + madd) and ggml_dots_vnni
// (vpdpbusd, for CPUs with AVX-VNNI). Both give the same bits.
#pragma once

#include "ggml_matmul.h"

#include <cstdint>

// Each kernel is instantiated for C = 1, 2 and kGgmlColumns activation rows.
#define GLMRT_DECLARE_GGML_DOT(name) \
  template <int C>                   \
  void name(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out);

#define GLMRT_DECLARE_GGML_DOTS                          \
  GLMRT_DECLARE_GGML_DOT(dot_q8_0)                       \
  GLMRT_DECLARE_GGML_DOT(dot_q4_0)                       \
  GLMRT_DECLARE_GGML_DOT(dot_q4_k)                       \
  GLMRT_DECLARE_GGML_DOT(dot_q6_k)                       \
  GLMRT_DECLARE_GGML_DOT(dot_q2_k)                       \
  GLMRT_DECLARE_GGML_DOT(dot_iq4_xs)                     \
  GLMRT_DECLARE_GGML_DOT(dot_iq2_xxs)                    \
  /** The kernel of a ggml type (ggml_type), or none. */ \
  GgmlKernel kernel_of(uint32_t ggml_type);

namespace glmrt::kernels_avx2 {
namespace ggml_dots {
GLMRT_DECLARE_GGML_DOTS
}  // namespace ggml_dots
namespace ggml_dots_vnni {
GLMRT_DECLARE_GGML_DOTS
}  // namespace ggml_dots_vnni
}  // namespace glmrt::kernels_avx2

#undef GLMRT_DECLARE_GGML_DOTS
#undef GLMRT_DECLARE_GGML_DOT
