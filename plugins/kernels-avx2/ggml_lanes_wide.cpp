// Lane kernels at 16 rows (Lanes16, ggml_lane_vectors.h), built with
// AVX-512 F/BW/VL/VNNI and run only where the CPU has them: a pack is two
// 8-row packs (ggml_lanes.cpp's) interleaved by 32-byte units, and the
// meets are ggml_lane_meets.h's, the same code as at 8 rows, so every row's
// result is the same bits. Also q4_k and q6_k rows packed in place: two
// groups of 8 meet as one (ggml_packed_meets.h).
//
// GCC 12's avx512fintrin.h builds _mm512_cvtepi32_ps on _mm512_undefined_ps(),
// which -Wmaybe-uninitialized reports as uninitialized (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "ggml_lane_meets.h"
#include "ggml_packed_meets.h"
#include "ggml_packed_rows.h"

#include <vector>

namespace glmrt::kernels_avx2 {
namespace {

using namespace lanes;

template <uint32_t kType>
size_t wide_packed_bytes(int64_t blocks) {
  return 2 * ggml_lane_kernel(kType).packed_bytes(blocks);
}

/// Rows 0-7 and 8-15 packed apart, then unit u of each at 64u and 64u + 32.
template <uint32_t kType>
void wide_pack(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed) {
  const GgmlLaneKernel narrow = ggml_lane_kernel(kType);
  const size_t half = narrow.packed_bytes(blocks);
  thread_local std::vector<uint8_t> halves;
  halves.resize(2 * half);
  narrow.pack(rows, row_stride, blocks, halves.data());
  narrow.pack(rows + kLaneRows * row_stride, row_stride, blocks, halves.data() + half);
  for (size_t u = 0; u < half; u += 32) {
    std::memcpy(packed + 2 * u, halves.data() + u, 32);
    std::memcpy(packed + 2 * u + 32, halves.data() + half + u, 32);
  }
}

template <uint32_t kType>
GgmlLaneKernel wide() {
  return {&wide_packed_bytes<kType>, &wide_pack<kType>, meet_of<Lanes16>(kType), kWideLaneRows};
}

}  // namespace

GgmlLaneKernel ggml_wide_lane_kernel(uint32_t ggml_type) {
  switch (ggml_type) {
    case GLMRT_GGML_Q8_0:
      return wide<GLMRT_GGML_Q8_0>();
    case GLMRT_GGML_Q4_0:
      return wide<GLMRT_GGML_Q4_0>();
    case GLMRT_GGML_Q4_K:
      return wide<GLMRT_GGML_Q4_K>();
    case GLMRT_GGML_Q2_K:
      return wide<GLMRT_GGML_Q2_K>();
    case GLMRT_GGML_Q6_K:
      return wide<GLMRT_GGML_Q6_K>();
    default:
      return {};
  }
}

void meet_packed_groups_wide(uint32_t ggml_type, const uint8_t* group, int64_t second,
                             int64_t blocks, const GgmlColumn* x, int columns, float* out) {
  if (ggml_type == GLMRT_GGML_Q4_K)
    meet_packed<Lanes16, MeetPackedQ4K>(group, second, blocks, x, columns, out);
  else if (ggml_type == GLMRT_GGML_Q6_K)
    meet_packed<Lanes16, MeetPackedQ6K>(group, second, blocks, x, columns, out);
}

}  // namespace glmrt::kernels_avx2
