// Lane kernels (ggml_lanes.h) for q2_k and q6_k, the types with a scale
// per 16 values, built with -mavxvnni. Each mirrors dot_q2_k / dot_q6_k in
// ggml_dots_k.cpp step for step (the block layouts are described there):
// a sub-block's two 16-value sums are scaled in int32 and added, exactly
// the integers those kernels reach, then the same float steps.
#include "ggml_lane_kernels.h"

namespace glmrt::kernels_avx2::lanes {
namespace {

/// Per super-block: 8 sub-blocks of packed codes, then int32 fields
/// [field][8 rows], then float fields [field][8 rows].
constexpr int64_t kCodes = 8 * 8 * 32;
constexpr int64_t kPackedQ2K = kCodes + 32 * kLaneRows * 4 + 2 * kLaneRows * 4;
constexpr int64_t kPackedQ6K = kCodes + 16 * kLaneRows * 4 + kLaneRows * 4;

GLMRT_ALWAYS_INLINE void store(uint8_t* out, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v);
}

GLMRT_ALWAYS_INLINE __m256i ints(const uint8_t* block, int field) {
  return load32(block + kCodes + 32 * field);
}

/// Per row, a * (sum of x's first 16 inputs of group g) + b * (its last 16).
GLMRT_ALWAYS_INLINE __m256i weighted_x_sums(__m256i a, __m256i b, const GgmlColumn& x, int64_t g) {
  return _mm256_add_epi32(_mm256_mullo_epi32(a, _mm256_set1_epi32(x.sums16[2 * g])),
                          _mm256_mullo_epi32(b, _mm256_set1_epi32(x.sums16[2 * g + 1])));
}

template <int C>
struct MeetQ2K {
  static void run(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, float* out) {
    meet_lanes<C>(blocks, out, [&](int j, int64_t sb, __m256(&acc)[C]) {
      const uint8_t* block = packed + kPackedQ2K * sb;
      const __m256i scale_a = ints(block, 2 * j), scale_b = ints(block, 2 * j + 1);
      const __m256i min_a = ints(block, 16 + 2 * j), min_b = ints(block, 17 + 2 * j);
      const auto* floats = reinterpret_cast<const float*>(block + kCodes + 32 * 32);
      const __m256 d = _mm256_loadu_ps(floats), dmin = _mm256_loadu_ps(floats + kLaneRows);
      for (int c = 0; c < C; ++c) {
        const int64_t g = 8 * sb + j;  // the activations' 32-input group
        __m256i first, second;
        half_sums(block + 8 * 32 * j, x[c].values + 32 * g, first, second);
        const __m256i codes = _mm256_add_epi32(_mm256_mullo_epi32(first, scale_a),
                                               _mm256_mullo_epi32(second, scale_b));
        const __m256i min_sums = weighted_x_sums(min_a, min_b, x[c], g);
        const __m256 dxs = _mm256_set1_ps(x[c].scales[g]);
        acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(codes), dxs), d, acc[c]);
        acc[c] = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(min_sums), dxs), dmin, acc[c]);
      }
    });
  }
};

template <int C>
struct MeetQ6K {
  static void run(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, float* out) {
    meet_lanes<C>(blocks, out, [&](int j, int64_t sb, __m256(&acc)[C]) {
      const uint8_t* block = packed + kPackedQ6K * sb;
      const __m256i scale_a = ints(block, 2 * j), scale_b = ints(block, 2 * j + 1);
      const __m256 d = _mm256_loadu_ps(reinterpret_cast<const float*>(block + kCodes + 16 * 32));
      for (int c = 0; c < C; ++c) {
        const int64_t g = 8 * sb + j;
        __m256i first, second;
        half_sums(block + 8 * 32 * j, x[c].values + 32 * g, first, second);
        // The -32 offset of every code, through the sums of x.
        const __m256i offsets = weighted_x_sums(scale_a, scale_b, x[c], g);
        const __m256i net = _mm256_sub_epi32(_mm256_add_epi32(_mm256_mullo_epi32(first, scale_a),
                                                              _mm256_mullo_epi32(second, scale_b)),
                                             _mm256_slli_epi32(offsets, 5));
        acc[c] = _mm256_fmadd_ps(
            _mm256_mul_ps(_mm256_cvtepi32_ps(net), _mm256_set1_ps(x[c].scales[g])), d, acc[c]);
      }
    });
  }
};

}  // namespace

size_t packed_bytes_q2_k(int64_t blocks) {
  return static_cast<size_t>(blocks * kPackedQ2K);
}
size_t packed_bytes_q6_k(int64_t blocks) {
  return static_cast<size_t>(blocks * kPackedQ6K);
}

void pack_q2_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed) {
  const __m256i two = _mm256_set1_epi8(0x03);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    uint8_t* out = packed + kPackedQ2K * sb;
    auto* floats = reinterpret_cast<float*>(out + kCodes + 32 * 32);
    const uint8_t* block[kLaneRows];
    alignas(16) uint8_t by_field[32][kLaneRows];  // 16 scales, then 16 mins
    for (int i = 0; i < kLaneRows; ++i) {
      block[i] = rows + i * row_stride + 84 * sb;
      for (int g = 0; g < 16; ++g) {
        by_field[g][i] = block[i][g] & 0x0F;
        by_field[16 + g][i] = block[i][g] >> 4;
      }
      floats[i] = f16(block[i] + 80);
      floats[kLaneRows + i] = f16(block[i] + 82);
    }
    store_fields(by_field, false, reinterpret_cast<int32_t*>(out + kCodes));
    // Each 32-byte run holds four sub-blocks, two bits each: one transpose.
    for (int n = 0; n < 2; ++n) {
      __m256i run[kLaneRows];
      for (int i = 0; i < kLaneRows; ++i) run[i] = load32(block[i] + 16 + 32 * n);
      transpose(run);
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 8; ++k)
          store(out + 8 * 32 * (4 * n + j) + 32 * k,
                _mm256_and_si256(_mm256_srli_epi16(run[k], 2 * j), two));
    }
  }
}

void pack_q6_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* packed) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(0x03);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    uint8_t* out = packed + kPackedQ6K * sb;
    auto* d = reinterpret_cast<float*>(out + kCodes + 16 * 32);
    const uint8_t* block[kLaneRows];
    alignas(16) uint8_t by_field[16][kLaneRows];  // the int8 scales
    for (int i = 0; i < kLaneRows; ++i) {
      block[i] = rows + i * row_stride + 210 * sb;
      for (int g = 0; g < 16; ++g) by_field[g][i] = block[i][192 + g];
      d[i] = f16(block[i] + 208);
    }
    store_fields(by_field, true, reinterpret_cast<int32_t*>(out + kCodes));
    for (int n = 0; n < 2; ++n) {
      __m256i ql0[kLaneRows], ql1[kLaneRows], qh[kLaneRows];
      for (int i = 0; i < kLaneRows; ++i) {
        ql0[i] = load32(block[i] + 64 * n);
        ql1[i] = load32(block[i] + 64 * n + 32);
        qh[i] = load32(block[i] + 128 + 32 * n);
      }
      transpose(ql0);
      transpose(ql1);
      transpose(qh);
      for (int k = 0; k < 4; ++k)
        for (int m = 0; m < 8; ++m) {
          const __m256i nibbles = k % 2 == 0 ? ql0[m] : ql1[m];
          const __m256i low = k < 2 ? _mm256_and_si256(nibbles, low4)
                                    : _mm256_and_si256(_mm256_srli_epi16(nibbles, 4), low4);
          const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh[m], 2 * k), two);
          store(out + 8 * 32 * (4 * n + k) + 32 * m,
                _mm256_or_si256(low, _mm256_slli_epi16(high, 4)));
        }
    }
  }
}

void meet_q2_k(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, int columns,
               float* out) {
  meet_columns<MeetQ2K>(packed, blocks, x, columns, out);
}

void meet_q6_k(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, int columns,
               float* out) {
  meet_columns<MeetQ6K>(packed, blocks, x, columns, out);
}

}  // namespace glmrt::kernels_avx2::lanes
