// How each integer weight format meets int8 activations (SIMD sources only).
//
// A kernel walks a weight row in steps of 32 bytes (48 for int3). The activations are
// quantized in blocks of 32 consecutive inputs (one f32 scale each) and stored
// per step in the order the step's decoded weight bytes come out, so the int8
// products line up without shuffling weights in the inner loop:
//
//   int8: 32 values per step, natural order, one block.
//   int4: 64 values per step. Decoding gives the low nibbles (elements 0,2,..62)
//         and the high nibbles (1,3,..63); x is stored [x0 x2 .. x62 | x1 x3 .. x63].
//         After maddubs + add + madd, int32 lane l holds elements 8l..8l+7, so
//         lanes 0-3 are block 0 and lanes 4-7 block 1.
//   int2: 128 values per step. Decoded register j holds elements 4k+j (k = 0..31);
//         x is stored as four 32-byte runs, run j = [x_j, x_{4+j}, ..]. Int32 lane l
//         holds elements 16l..16l+15: lanes 2q, 2q+1 are block q.
//   int3: 128 values per step (one block of weight_format.h: 32 bytes of low
//         bits laid out as int2's, then 16 of high bits). Decoding gives the
//         same registers as int2 with each byte's high bit added as 4, so x is
//         stored as for int2.
//
// int4, int3 and int2 are decoded unsigned (v + 8, v + 4, v + 2): maddubs needs one unsigned
// operand, and sum(v * x) = sum(u * x) - offset * sum(x), with sum(x) per block
// taken once when quantizing. int8 uses the sign trick: |w| * (x * sign(w)).
// No int16 sum can saturate: |x| <= 127 and |w| <= 128 (int8), u <= 15 (int4,
// two products summed twice), u <= 7 (int3) and u <= 3 (int2, two products
// summed four times). Even an x of -128 keeps every int16 sum in range (int8:
// a pair in [-32768, 32512]; the others below 8192 in magnitude).
//
// The dots (dot(Decoded, x) below) come in two builds, as the ggml dots do
// (ggml_dot_kernels.h): namespace int_dots with AVX2's maddubs + madd, and,
// through int_matmul_vnni.cpp with -mavxvnni and GLMRT_INT_DOTS_VNNI,
// namespace int_dots_vnni with AVX-VNNI's vpdpbusd.
//
// A row's last, partial step is copied into a zero-padded buffer of one step
// (copy_tail) and read like the others: zero activations meet its padding.
#pragma once

#include "simd.h"

#include <glmrt/plugin/weight_format.h>

#include <cstdint>
#include <cstring>

namespace glmrt::kernels_avx2 {

constexpr int kBlockSize = 32;  // activation inputs sharing one scale
/// The most bytes one step of any format reads.
constexpr int kMaxWeightBytesPerStep = 48;

/// The partial last step of a row as its bytes are stored (every format but int3).
GLMRT_ALWAYS_INLINE void copy_packed_tail(const uint8_t* src, int64_t bytes, uint8_t* dst) {
  std::memcpy(dst, src, static_cast<size_t>(bytes));
}

struct Int8Format {
  static constexpr int kBytesPerStep = 32;
  /// The last `values` values of a row (fewer than a step), from `src`, into `dst`.
  static GLMRT_ALWAYS_INLINE void copy_tail(const uint8_t* src, int64_t bytes, int64_t,
                                            uint8_t* dst) {
    copy_packed_tail(src, bytes, dst);
  }
  static constexpr int kElementsPerStep = 32;
  static constexpr int kBlocksPerStep = 1;
  static constexpr int kScalesPerStep = 1;  // one block: broadcast its scale
  static constexpr int kOffset = 0;
  // Tile shapes (weight rows x activation rows), chosen by bench/kernels.
  static constexpr int kRowsAtS1 = 1;
  static constexpr int kRows = 2;
  static constexpr int kCols = 4;

  struct Decoded {
    __m256i signed_w;
    __m256i abs_w;
  };
  static GLMRT_ALWAYS_INLINE Decoded decode(const uint8_t* p) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {w, _mm256_sign_epi8(w, w)};
  }
  static GLMRT_ALWAYS_INLINE __m256 x_scales(const float* s) { return _mm256_broadcast_ss(s); }
  /// Weight scales of the step's lanes; `block_group` maps block -> group.
  static GLMRT_ALWAYS_INLINE __m256 weight_scales(const float* row_scales,
                                                  const int32_t* block_group, int64_t step) {
    return _mm256_broadcast_ss(row_scales + block_group[step]);
  }
  /// Rearranges one step of quantized activations (natural order) for dot().
  static GLMRT_ALWAYS_INLINE void arrange(const int8_t* natural, int8_t* out) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(natural)));
  }
};

struct Int4Format {
  static constexpr int kBytesPerStep = 32;
  /// The last `values` values of a row (fewer than a step), from `src`, into `dst`.
  static GLMRT_ALWAYS_INLINE void copy_tail(const uint8_t* src, int64_t bytes, int64_t,
                                            uint8_t* dst) {
    copy_packed_tail(src, bytes, dst);
  }
  static constexpr int kElementsPerStep = 64;
  static constexpr int kBlocksPerStep = 2;
  static constexpr int kScalesPerStep = 8;  // lanes 0-3 block 0, lanes 4-7 block 1
  static constexpr int kOffset = 8;
  static constexpr int kRowsAtS1 = 1;
  static constexpr int kRows = 2;
  static constexpr int kCols = 4;

  struct Decoded {
    __m256i low;   // elements 0, 2, .., 62 (unsigned, v + 8)
    __m256i high;  // elements 1, 3, .., 63
  };
  static GLMRT_ALWAYS_INLINE Decoded decode(const uint8_t* p) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i mask = _mm256_set1_epi8(0x0F);
    return {_mm256_and_si256(bytes, mask), _mm256_and_si256(_mm256_srli_epi16(bytes, 4), mask)};
  }
  static GLMRT_ALWAYS_INLINE __m256 x_scales(const float* s) { return _mm256_loadu_ps(s); }
  static GLMRT_ALWAYS_INLINE __m256 weight_scales(const float* row_scales,
                                                  const int32_t* block_group, int64_t step) {
    const int32_t* groups = block_group + step * kBlocksPerStep;
    return _mm256_set_m128(_mm_broadcast_ss(row_scales + groups[1]),
                           _mm_broadcast_ss(row_scales + groups[0]));
  }
  static GLMRT_ALWAYS_INLINE void arrange(const int8_t* natural, int8_t* out) {
    // Per 16-byte lane: evens then odds; then gather the halves across lanes.
    const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0,
                                           2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    auto evens_then_odds = [&](const int8_t* p) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, split), 0b11011000);
    };
    const __m256i first = evens_then_odds(natural);
    const __m256i second = evens_then_odds(natural + 32);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                        _mm256_permute2x128_si256(first, second, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32),
                        _mm256_permute2x128_si256(first, second, 0x31));
  }
};

struct Int2Format {
  static constexpr int kBytesPerStep = 32;
  /// The last `values` values of a row (fewer than a step), from `src`, into `dst`.
  static GLMRT_ALWAYS_INLINE void copy_tail(const uint8_t* src, int64_t bytes, int64_t,
                                            uint8_t* dst) {
    copy_packed_tail(src, bytes, dst);
  }
  static constexpr int kElementsPerStep = 128;
  static constexpr int kBlocksPerStep = 4;
  static constexpr int kScalesPerStep = 8;  // lanes 2q, 2q+1 are block q
  static constexpr int kOffset = 2;
  static constexpr int kRowsAtS1 = 1;
  static constexpr int kRows = 1;
  static constexpr int kCols = 4;

  struct Decoded {
    __m256i part[4];  // part[j] byte k = element 4k + j (unsigned, v + 2)
  };
  static GLMRT_ALWAYS_INLINE Decoded decode(const uint8_t* p) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i mask = _mm256_set1_epi8(0x03);
    return {{_mm256_and_si256(bytes, mask), _mm256_and_si256(_mm256_srli_epi16(bytes, 2), mask),
             _mm256_and_si256(_mm256_srli_epi16(bytes, 4), mask),
             _mm256_and_si256(_mm256_srli_epi16(bytes, 6), mask)}};
  }
  static GLMRT_ALWAYS_INLINE __m256 x_scales(const float* s) { return _mm256_loadu_ps(s); }
  static GLMRT_ALWAYS_INLINE __m256 weight_scales(const float* row_scales,
                                                  const int32_t* block_group, int64_t step) {
    const int32_t* groups = block_group + step * kBlocksPerStep;
    const __m128 four = _mm_setr_ps(row_scales[groups[0]], row_scales[groups[1]],
                                    row_scales[groups[2]], row_scales[groups[3]]);
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(four),
                                    _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
  }
  static GLMRT_ALWAYS_INLINE void arrange(const int8_t* natural, int8_t* out) {
    // Each 32-value block holds k = 8m..8m+7 for every j: group its bytes by j
    // (one 8-byte word per j), then transpose the 4x4 words across blocks.
    const __m256i by_j = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0,
                                          4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i join_lanes = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256i words[4];
    for (int m = 0; m < 4; ++m) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(natural + 32 * m));
      words[m] = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, by_j), join_lanes);
    }
    const __m256i t0 = _mm256_unpacklo_epi64(words[0], words[1]);
    const __m256i t1 = _mm256_unpackhi_epi64(words[0], words[1]);
    const __m256i t2 = _mm256_unpacklo_epi64(words[2], words[3]);
    const __m256i t3 = _mm256_unpackhi_epi64(words[2], words[3]);
    auto* o = reinterpret_cast<__m256i*>(out);
    _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(t0, t2, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(t1, t3, 0x20));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(t0, t2, 0x31));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(t1, t3, 0x31));
  }
};

struct Int3Format {
  static constexpr int kBytesPerStep = static_cast<int>(plugin::kInt3BlockBytes);
  static constexpr int kElementsPerStep = static_cast<int>(plugin::kInt3BlockValues);
  static constexpr int kBlocksPerStep = 4;
  static constexpr int kScalesPerStep = 8;  // as int2: lanes 2q, 2q+1 are block q
  static constexpr int kOffset = 4;
  static constexpr int kRowsAtS1 = 1;
  static constexpr int kRows = 1;
  static constexpr int kCols = 4;

  /// A partial block keeps its high bits right after its low ones; the step
  /// buffer wants them at byte 32, as a full block has them.
  static GLMRT_ALWAYS_INLINE void copy_tail(const uint8_t* src, int64_t, int64_t values,
                                            uint8_t* dst) {
    const int64_t low = plugin::int3_high_offset(values);
    std::memcpy(dst, src, static_cast<size_t>(low));
    std::memcpy(dst + 32, src + low, static_cast<size_t>((values + 7) / 8));
  }

  struct Decoded {
    __m256i part[4];  // part[j] byte k = element 4k + j (unsigned, v + 4)
  };
  static GLMRT_ALWAYS_INLINE Decoded decode(const uint8_t* p) {
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    // Element 4k + j's high bit is bit 4 (k % 2) + j of high byte k / 2: copy
    // high byte k / 2 into byte k (one 16-byte lane for k < 16, the other for
    // k >= 16), then test the bit of each j.
    const __m256i high =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32)));
    const __m256i spread = _mm256_shuffle_epi8(
        high, _mm256_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
                               11, 11, 12, 12, 13, 13, 14, 14, 15, 15));
    const __m256i mask = _mm256_set1_epi8(0x03);
    const __m256i four = _mm256_set1_epi8(0x04);
    Decoded d;
    for (int j = 0; j < 4; ++j) {
      const __m256i bit = _mm256_setr_epi8(
          static_cast<char>(1 << j), static_cast<char>(16 << j), static_cast<char>(1 << j),
          static_cast<char>(16 << j), static_cast<char>(1 << j), static_cast<char>(16 << j),
          static_cast<char>(1 << j), static_cast<char>(16 << j), static_cast<char>(1 << j),
          static_cast<char>(16 << j), static_cast<char>(1 << j), static_cast<char>(16 << j),
          static_cast<char>(1 << j), static_cast<char>(16 << j), static_cast<char>(1 << j),
          static_cast<char>(16 << j), static_cast<char>(1 << j), static_cast<char>(16 << j),
          static_cast<char>(1 << j), static_cast<char>(16 << j), static_cast<char>(1 << j),
          static_cast<char>(16 << j), static_cast<char>(1 << j), static_cast<char>(16 << j),
          static_cast<char>(1 << j), static_cast<char>(16 << j), static_cast<char>(1 << j),
          static_cast<char>(16 << j), static_cast<char>(1 << j), static_cast<char>(16 << j),
          static_cast<char>(1 << j), static_cast<char>(16 << j));
      const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
      const __m256i low_bits = _mm256_and_si256(_mm256_srli_epi16(low, 2 * j), mask);
      d.part[j] = _mm256_or_si256(low_bits, _mm256_and_si256(set, four));
    }
    return d;
  }
  static GLMRT_ALWAYS_INLINE __m256 x_scales(const float* s) { return _mm256_loadu_ps(s); }
  static GLMRT_ALWAYS_INLINE __m256 weight_scales(const float* row_scales,
                                                  const int32_t* block_group, int64_t step) {
    return Int2Format::weight_scales(row_scales, block_group, step);
  }
  static GLMRT_ALWAYS_INLINE void arrange(const int8_t* natural, int8_t* out) {
    Int2Format::arrange(natural, out);
  }
};

}  // namespace glmrt::kernels_avx2

#if defined(GLMRT_INT_DOTS_VNNI)
#define GLMRT_INT_DOTS int_dots_vnni
#else
#define GLMRT_INT_DOTS int_dots
#endif

// dot(): the int32 lanes of one decoded step against its arranged
// activations, lane l the sum of the products of bytes 4l..4l+3 of every
// decoded register. The maddubs build adds the products in int16 first; the
// VNNI build accumulates them straight into int32 with vpdpbusd, which never
// saturates. Since no int16 sum of the maddubs build can saturate either (the
// bounds above), both build the same integer sums: the same int32 lanes and
// so the same bits downstream.
namespace glmrt::kernels_avx2::GLMRT_INT_DOTS {

GLMRT_ALWAYS_INLINE __m256i load_x(const int8_t* x) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
}

/// The int32 lanes of n products of unsigned u[j] and signed x[j] (int16
/// pair sums for maddubs: see the bounds above). int4 (n = 2) and int3/int2
/// (n = 4) add their registers' pairs in int16 before one madd; vpdpbusd
/// chains them in int32, the same integer sum.
template <int n>
GLMRT_ALWAYS_INLINE __m256i dot_unsigned(const __m256i (&u)[n], const __m256i (&x)[n]) {
#if defined(GLMRT_INT_DOTS_VNNI)
  __m256i lanes = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u[0], x[0]);
#pragma GCC unroll 4
  for (int j = 1; j < n; ++j) lanes = _mm256_dpbusd_avx_epi32(lanes, u[j], x[j]);
  return lanes;
#else
  __m256i pairs = _mm256_maddubs_epi16(u[0], x[0]);
#pragma GCC unroll 4
  for (int j = 1; j < n; ++j) pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(u[j], x[j]));
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
#endif
}

/// int8 by the sign trick: |w| (at most 128, unsigned) times x * sign(w).
GLMRT_ALWAYS_INLINE __m256i dot(const Int8Format::Decoded& d, const int8_t* x) {
  return dot_unsigned<1>({d.abs_w}, {_mm256_sign_epi8(load_x(x), d.signed_w)});
}

GLMRT_ALWAYS_INLINE __m256i dot(const Int4Format::Decoded& d, const int8_t* x) {
  return dot_unsigned<2>({d.low, d.high}, {load_x(x), load_x(x + 32)});
}

/// Four registers of unsigned codes (byte k of part j = element 4k + j)
/// against x stored as four 32-byte runs (int2 and int3).
GLMRT_ALWAYS_INLINE __m256i dot_parts(const __m256i (&part)[4], const int8_t* x) {
  return dot_unsigned<4>(part, {load_x(x), load_x(x + 32), load_x(x + 64), load_x(x + 96)});
}

GLMRT_ALWAYS_INLINE __m256i dot(const Int2Format::Decoded& d, const int8_t* x) {
  return dot_parts(d.part, x);
}

GLMRT_ALWAYS_INLINE __m256i dot(const Int3Format::Decoded& d, const int8_t* x) {
  return dot_parts(d.part, x);
}

}  // namespace glmrt::kernels_avx2::GLMRT_INT_DOTS
