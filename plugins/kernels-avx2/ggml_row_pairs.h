// Two weight rows per zmm for products with few activation rows (a decode
// step's S = 1, int8x2's two passes, a short verification), where packing
// rows into lanes (ggml_lanes.h) costs more than it saves: the 256-bit half
// h of every vector holds row h's lanes of the AVX2 row kernel
// (ggml_dot_kernels.h), so each row goes through the same float operations
// on the same values in the same order, the same bits, with half the
// instructions where the CPU runs 512-bit vpdpbusd at the 256-bit rate.
// Built with AVX-512 F/BW/VL/VNNI, run only where CPUID has them
// (`avx512: auto`).
#pragma once

#include "ggml_matmul.h"

#include <cstdint>

namespace glmrt::kernels_avx2 {

/// out[2 c + h] = weight row `rows[h]` . activation row x[c], for the C
/// activation rows of the kernel's width (1, 2 or kGgmlColumns).
using GgmlRowPairDot = void (*)(const uint8_t* const (&rows)[2], int64_t blocks,
                                const GgmlColumn* x, float* out);

struct GgmlRowPairKernel {
  GgmlRowPairDot one = nullptr;
  GgmlRowPairDot pair = nullptr;
  GgmlRowPairDot wide = nullptr;
};

/// The kernel of a ggml type (ggml_type) for two rows at a time, or none
/// (the type keeps its row kernel).
GgmlRowPairKernel ggml_row_pair_kernel(uint32_t ggml_type);

}  // namespace glmrt::kernels_avx2
