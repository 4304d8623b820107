// Lane kernels (ggml_lanes.h) for q8_0, q4_0 and q4_k, built with
// -mavxvnni. Each mirrors its row-at-a-time kernel in ggml_dots_k.cpp step
// for step; the comments there give the block layouts (ggml-common.h's).
#include "ggml_lanes.h"

// The helpers of the VNNI build of the row-at-a-time kernels.
#define GLMRT_GGML_DOTS_VNNI 1
#include "ggml_dot_kernels.h"

namespace glmrt::kernels_avx2 {
namespace {

using ggml_dots_vnni::f16;
using ggml_dots_vnni::load32;
using ggml_dots_vnni::q4_0_codes;
using ggml_dots_vnni::q4_k_scales_mins;

/// rows[i] holds 8 chunks of 4 bytes of row i; afterwards rows[k] holds
/// chunk k of every row, row i in lane i (an 8 x 8 transpose of 32-bit lanes).
GLMRT_ALWAYS_INLINE void transpose(__m256i (&r)[8]) {
  __m256i t[8], u[8];
  for (int p = 0; p < 4; ++p) {
    t[2 * p] = _mm256_unpacklo_epi32(r[2 * p], r[2 * p + 1]);
    t[2 * p + 1] = _mm256_unpackhi_epi32(r[2 * p], r[2 * p + 1]);
  }
  for (int h = 0; h < 2; ++h) {
    const __m256i *lo = t + 4 * h, *hi = t + 4 * h + 2;
    u[4 * h + 0] = _mm256_unpacklo_epi64(lo[0], hi[0]);
    u[4 * h + 1] = _mm256_unpackhi_epi64(lo[0], hi[0]);
    u[4 * h + 2] = _mm256_unpacklo_epi64(lo[1], hi[1]);
    u[4 * h + 3] = _mm256_unpackhi_epi64(lo[1], hi[1]);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x20);
    r[4 + k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x31);
  }
}

/// Stores 32 unsigned codes of each packed row (codes[i], row i) as 8 chunks
/// of 32 bytes, chunk k holding codes 4k..4k+3 of every row.
GLMRT_ALWAYS_INLINE void store_chunks(__m256i (&codes)[8], uint8_t* out) {
  transpose(codes);
  for (int k = 0; k < 8; ++k)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * k), codes[k]);
}

/// Each row's exact sum of its 32 codes times x[0..31] (codes as store_chunks lays them).
GLMRT_ALWAYS_INLINE __m256i chunk_sums(const uint8_t* chunks, const int8_t* x) {
  __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
#pragma GCC unroll 4
  for (int k = 0; k < 8; k += 2) {
    int32_t a, b;
    std::memcpy(&a, x + 4 * k, 4);
    std::memcpy(&b, x + 4 * k + 4, 4);
    even = _mm256_dpbusd_avx_epi32(even, load32(chunks + 32 * k), _mm256_set1_epi32(a));
    odd = _mm256_dpbusd_avx_epi32(odd, load32(chunks + 32 * k + 32), _mm256_set1_epi32(b));
  }
  return _mm256_add_epi32(even, odd);
}

/// Per lane, horizontal_sum's tree over the 8 partial sums a row-at-a-time
/// kernel keeps in its lanes: ((f0 + f4) + (f2 + f6)) + ((f1 + f5) + (f3 + f7)).
GLMRT_ALWAYS_INLINE __m256 lane_totals(const __m256 (&f)[8]) {
  return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(f[0], f[4]), _mm256_add_ps(f[2], f[6])),
                       _mm256_add_ps(_mm256_add_ps(f[1], f[5]), _mm256_add_ps(f[3], f[7])));
}

// --- q8_0 and q4_0: per block, 8 chunks of codes then the 8 rows' d. ---
constexpr int64_t kPacked32 = 8 * 32 + kLaneRows * 4;

size_t packed_bytes_32(int64_t blocks) {
  // Their kernels keep a lane per block of 8: whole groups only.
  return blocks % 8 == 0 ? static_cast<size_t>(blocks * kPacked32) : 0;
}

/// codes_of: a block's 32 codes, unsigned (its kernel takes the offset off).
template <int kBlockBytes, class Codes>
void pack_32(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed,
             Codes codes_of) {
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* out = packed + kPacked32 * b;
    __m256i codes[8];
    float d[kLaneRows];
    for (int i = 0; i < kLaneRows; ++i) {
      const uint8_t* block = rows + i * row_stride + kBlockBytes * b;
      codes[i] = codes_of(block);
      d[i] = f16(block);
    }
    store_chunks(codes, out);
    std::memcpy(out + 8 * 32, d, sizeof(d));
  }
}

template <int kOffset, int C>
void meet_32(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, float* out) {
  __m256 f[C][8];
  for (int j = 0; j < 8; ++j) {
    __m256 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = j; b < blocks; b += 8) {
      const uint8_t* block = packed + kPacked32 * b;
      const __m256 d = _mm256_loadu_ps(reinterpret_cast<const float*>(block + 8 * 32));
      for (int c = 0; c < C; ++c) {
        __m256i sums = chunk_sums(block, x[c].values + 32 * b);
        const int x_sum = x[c].sums16[2 * b] + x[c].sums16[2 * b + 1];
        sums = _mm256_sub_epi32(sums, _mm256_set1_epi32(kOffset * x_sum));
        const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[c].scales[b]));
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, acc[c]);
      }
    }
    for (int c = 0; c < C; ++c) f[c][j] = acc[c];
  }
  for (int c = 0; c < C; ++c) _mm256_storeu_ps(out + kLaneRows * c, lane_totals(f[c]));
}

// --- q4_k: per super-block, 8 sub-blocks of chunks, then per sub-block the
// rows' scales and mins, then the rows' d and dmin (floats). ---
constexpr int64_t kCodesK = 8 * 8 * 32;
constexpr int64_t kPackedQ4K = kCodesK + 2 * 8 * kLaneRows * 4 + 2 * kLaneRows * 4;

size_t packed_bytes_q4_k(int64_t blocks) {
  return static_cast<size_t>(blocks * kPackedQ4K);
}

void pack_q4_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    uint8_t* out = packed + kPackedQ4K * sb;
    auto* scales_mins = reinterpret_cast<float*>(out + kCodesK);  // [16][8 rows]
    float* d = scales_mins + 16 * kLaneRows;
    float* dmin = d + kLaneRows;
    const uint8_t* block[kLaneRows];
    alignas(16) uint8_t by_field[16][kLaneRows];  // 8 scales then 8 mins, per row
    for (int i = 0; i < kLaneRows; ++i) {
      block[i] = rows + i * row_stride + 144 * sb;
      uint8_t six_bit[16];
      q4_k_scales_mins(block[i], six_bit);
      for (int f = 0; f < 16; ++f) by_field[f][i] = six_bit[f];
      d[i] = f16(block[i]);
      dmin[i] = f16(block[i] + 2);
    }
    for (int f = 0; f < 16; ++f)
      _mm256_storeu_ps(scales_mins + f * kLaneRows,
                       _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                           _mm_loadl_epi64(reinterpret_cast<const __m128i*>(by_field[f])))));
    // A 32-byte run of nibbles is two sub-blocks (low, high) of 32 values:
    // one transpose of the bytes serves both.
    for (int q = 0; q < 4; ++q) {
      __m256i chunks[kLaneRows];
      for (int i = 0; i < kLaneRows; ++i) chunks[i] = load32(block[i] + 16 + 32 * q);
      transpose(chunks);
      for (int k = 0; k < 8; ++k) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * 32 * (2 * q) + 32 * k),
                            _mm256_and_si256(chunks[k], low4));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * 32 * (2 * q + 1) + 32 * k),
                            _mm256_and_si256(_mm256_srli_epi16(chunks[k], 4), low4));
      }
    }
  }
}

template <int C>
void meet_q4_k(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, float* out) {
  __m256 f[C][8];
  for (int j = 0; j < 8; ++j) {
    __m256 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < blocks; ++sb) {
      const uint8_t* block = packed + kPackedQ4K * sb;
      const auto* floats = reinterpret_cast<const float*>(block + kCodesK);
      const __m256 scales = _mm256_loadu_ps(floats + j * kLaneRows);
      const __m256 mins = _mm256_loadu_ps(floats + (8 + j) * kLaneRows);
      const __m256 d = _mm256_loadu_ps(floats + 16 * kLaneRows);
      const __m256 dmin = _mm256_loadu_ps(floats + 17 * kLaneRows);
      for (int c = 0; c < C; ++c) {
        const int64_t g = 8 * sb + j;  // the activations' 32-input group
        const __m256i sums = chunk_sums(block + 8 * 32 * j, x[c].values + 32 * g);
        const float dxs = x[c].scales[g];
        const float x_sums = static_cast<float>(x[c].sums16[2 * g] + x[c].sums16[2 * g + 1]) * dxs;
        const __m256 codes = _mm256_mul_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(dxs));
        acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(codes, scales), d, acc[c]);
        acc[c] = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_set1_ps(x_sums), mins), dmin, acc[c]);
      }
    }
    for (int c = 0; c < C; ++c) f[c][j] = acc[c];
  }
  for (int c = 0; c < C; ++c) _mm256_storeu_ps(out + kLaneRows * c, lane_totals(f[c]));
}

/// meet for 1 to kGgmlColumns activation rows.
template <template <int> class Meet>
void meet_columns(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, int columns,
                  float* out) {
  switch (columns) {
    case 1:
      return Meet<1>::run(packed, blocks, x, out);
    case 2:
      return Meet<2>::run(packed, blocks, x, out);
    case 3:
      return Meet<3>::run(packed, blocks, x, out);
    default:
      return Meet<4>::run(packed, blocks, x, out);
  }
}
static_assert(kGgmlColumns == 4, "meet_columns covers 1 to 4 activation rows");

template <int C>
struct MeetQ8_0 {
  static void run(const uint8_t* b, int64_t n, const GgmlColumn* x, float* o) {
    meet_32<128, C>(b, n, x, o);
  }
};
template <int C>
struct MeetQ4_0 {
  static void run(const uint8_t* b, int64_t n, const GgmlColumn* x, float* o) {
    meet_32<8, C>(b, n, x, o);
  }
};
template <int C>
struct MeetQ4_K {
  static void run(const uint8_t* b, int64_t n, const GgmlColumn* x, float* o) {
    meet_q4_k<C>(b, n, x, o);
  }
};

}  // namespace

GgmlLaneKernel ggml_lane_kernel(uint32_t ggml_type) {
  switch (ggml_type) {
    case GLMRT_GGML_Q8_0:
      return {&packed_bytes_32,
              [](const uint8_t* rows, int64_t stride, int64_t blocks, uint8_t* packed) {
                // Signed codes + 128: the unsigned side of vpdpbusd.
                pack_32<34>(rows, stride, blocks, packed, [](const uint8_t* block) {
                  return _mm256_xor_si256(load32(block + 2), _mm256_set1_epi8(-128));
                });
              },
              &meet_columns<MeetQ8_0>};
    case GLMRT_GGML_Q4_0:
      return {&packed_bytes_32,
              [](const uint8_t* rows, int64_t stride, int64_t blocks, uint8_t* packed) {
                pack_32<18>(rows, stride, blocks, packed, &q4_0_codes);
              },
              &meet_columns<MeetQ4_0>};
    case GLMRT_GGML_Q4_K:
      return {&packed_bytes_q4_k, &pack_q4_k, &meet_columns<MeetQ4_K>};
    default:
      return {};
  }
}

}  // namespace glmrt::kernels_avx2
