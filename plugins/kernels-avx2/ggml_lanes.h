// Lanes: 8 weight rows of a ggml type packed once, in a thread's scratch,
// for a product with many activation rows (a prefill, a batched step).
// Each 32-bit lane of a vector then holds one weight row: 4 codes of each
// of the 8 rows load as one vector and meet 4 inputs broadcast to every
// lane in one vpdpbusd, so a row's integer sums gather in its own lane
// with no horizontal adds, and the float steps run for 8 rows at a time.
// The row-at-a-time kernels (ggml_dots.h) spend about half their work on
// those horizontal adds and on decoding a block again for every 4
// activation rows; here the decode runs once per 8 rows.
//
// Same bits as the row-at-a-time kernels: every integer sum is exact either
// way, each float step is the same IEEE operation on the same values, and
// a row's partial sums are kept and added in the order those kernels keep
// them (a lane per block of 8, summed by horizontal_sum's tree), so a
// result does not depend on S, the packing or the thread split.
//
// Built for AVX-VNNI only (ggml_lanes.cpp, ggml_lanes_k.cpp, -mavxvnni): the unsigned side of
// vpdpbusd is the weight codes (q8_0's stored with +128), which vpmaddubsw
// would saturate. With AVX-512 VNNI a zmm holds 16 rows (ggml_lanes_wide.cpp):
// half the instructions per product, the same bits.
#pragma once

#include "ggml_matmul.h"

#include <cstddef>
#include <cstdint>

namespace glmrt::kernels_avx2 {

/// Weight rows packed together: one per 32-bit lane of a vector (ymm).
inline constexpr int kLaneRows = 8;
/// The same with AVX-512 VNNI (zmm): two 8-row packs interleaved.
inline constexpr int kWideLaneRows = 16;

/// A type's lane kernel, or all null.
struct GgmlLaneKernel {
  /// Bytes of `rows` packed rows of `blocks` blocks, or 0 when rows of
  /// that many blocks take the row-at-a-time kernels.
  size_t (*packed_bytes)(int64_t blocks) = nullptr;
  /// Packs `rows` rows (`row_stride` bytes apart) into `packed`.
  void (*pack)(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed) = nullptr;
  /// out[c * rows + i] = packed row i . activation row x[c], for
  /// c < columns (1 to kGgmlColumns).
  void (*meet)(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, int columns,
               float* out) = nullptr;
  /// Weight rows one pack holds.
  int rows = kLaneRows;
};

/// The lane kernel of a ggml type (q8_0, q4_0, q2_k, q4_k, q6_k), or none.
GgmlLaneKernel ggml_lane_kernel(uint32_t ggml_type);

/// The same at kWideLaneRows rows, for a CPU with AVX-512 F, BW, VL and
/// VNNI only (ggml_lanes_wide.cpp): the same bits as ggml_lane_kernel's.
GgmlLaneKernel ggml_wide_lane_kernel(uint32_t ggml_type);

}  // namespace glmrt::kernels_avx2
