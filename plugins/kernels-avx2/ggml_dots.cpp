// The int8-activation kernels of ggml blocks: one weight row against one
// activation row (x quantized per 32 inputs, scale dx, sums per 16). Each
// block type is decoded as ggml-common.h lays it out (the same layouts the
// reference dequantization in plugin-support/ggml/ reads); per 32 inputs the
// integer dot of the codes with x, then per super-block one float step with
// the block's scales (and mins or offsets, through the sums of x). Every
// output sums its blocks in order, so it does not depend on S or the tile.
#include "ggml_matmul.h"

#include "simd.h"

#include <ggml/ggml_grids.h>

#include <array>
#include <cstring>

namespace glmrt::kernels_avx2 {
namespace {

namespace ggml = plugin_support::ggml;

GLMRT_ALWAYS_INLINE float f16(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return _cvtsh_ss(bits);  // exact, as ggml's conversion, for every finite half
}

GLMRT_ALWAYS_INLINE __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

/// int32 lanes whose total is sum(u[k] * x[k]) for 32 unsigned u and signed x.
GLMRT_ALWAYS_INLINE __m256i dot_unsigned(__m256i u, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1));
}

/// The same for 32 signed w (|w| <= 127 or -128 x 127 pairs that cannot saturate).
GLMRT_ALWAYS_INLINE __m256i dot_signed(__m256i w, __m256i x) {
  return dot_unsigned(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
}

/// Lane b of the result is the total of the 8 lanes of p[b].
GLMRT_ALWAYS_INLINE __m256i totals(const __m256i (&p)[8]) {
  const __m256i g0 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
  const __m256i g1 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(g0, g1, 0x20),
                          _mm256_permute2x128_si256(g0, g1, 0x31));
}

/// 8 int32 lanes: the sums of x over 32 inputs, from 16 sums of 16.
GLMRT_ALWAYS_INLINE __m256i sums32(const int16_t* sums16) {
  return _mm256_madd_epi16(load32(sums16), _mm256_set1_epi16(1));
}

/// Per 32 inputs [s(2b) x 8 | s(2b+1) x 8] as int16, from 16 int8 scales
/// (one per 16 inputs): the scale of each int16 pair maddubs gives.
GLMRT_ALWAYS_INLINE __m256i pair_scales(__m128i scales16, int b) {
  const __m128i pick = _mm_setr_epi8(
      static_cast<char>(2 * b), static_cast<char>(2 * b), static_cast<char>(2 * b),
      static_cast<char>(2 * b), static_cast<char>(2 * b), static_cast<char>(2 * b),
      static_cast<char>(2 * b), static_cast<char>(2 * b), static_cast<char>(2 * b + 1),
      static_cast<char>(2 * b + 1), static_cast<char>(2 * b + 1), static_cast<char>(2 * b + 1),
      static_cast<char>(2 * b + 1), static_cast<char>(2 * b + 1), static_cast<char>(2 * b + 1),
      static_cast<char>(2 * b + 1));
  return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales16, pick));
}

GLMRT_ALWAYS_INLINE void prefetch_block(const uint8_t* p, int64_t bytes) {
  for (int64_t k = 0; k < bytes; k += 64) prefetch_ahead(p + k);
}

// Each kernel decodes a super-block once, then meets C activation rows with
// it, every row with the same operations in the same order as alone: a
// row's result does not depend on how many rows share the call.
template <int C>
struct Accumulators {
  __m256 lanes[C];
  GLMRT_ALWAYS_INLINE __m256& operator[](int c) { return lanes[c]; }
  GLMRT_ALWAYS_INLINE const __m256& operator[](int c) const { return lanes[c]; }
};

template <int C>
GLMRT_ALWAYS_INLINE Accumulators<C> zeros() {
  Accumulators<C> acc;
  for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
  return acc;
}

template <int C>
GLMRT_ALWAYS_INLINE void finish(const Accumulators<C>& acc, float* out) {
  for (int c = 0; c < C; ++c) out[c] = horizontal_sum(acc[c]);
}

// Q8_0: per 32 values an f16 d and 32 int8.
template <int C>
void dot_q8_0(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = row + 34 * b;
    if (b % 2 == 0) prefetch_ahead(block);
    const __m256i w = load32(block + 2), magnitude = _mm256_sign_epi8(w, w);
    const float d = f16(block);
    for (int c = 0; c < C; ++c) {
      const __m256i p = dot_unsigned(magnitude, _mm256_sign_epi8(load32(x[c].values + 32 * b), w));
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * x[c].scales[b]), acc[c]);
    }
  }
  finish<C>(acc, out);
}

// Q4_K: d, dmin, 12 bytes of eight 6-bit scales and mins, 128 bytes of
// nibbles: sub-block 2j is the low nibbles of bytes 32j..32j+31, 2j+1 the high.
// value = d * sc * q - dmin * m.
template <int C>
void dot_q4_k(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 144 * sb;
    prefetch_block(block, 144);
    // The 6-bit packing of ggml's get_scale_min_k4: bytes 0-7 scales, 8-15 mins.
    uint32_t packed[3], unpacked[4];
    std::memcpy(packed, block + 4, 12);
    unpacked[0] = packed[0] & 0x3f3f3f3f;
    unpacked[1] = (packed[2] & 0x0f0f0f0f) | (((packed[0] >> 6) & 0x03030303) << 4);
    unpacked[2] = packed[1] & 0x3f3f3f3f;
    unpacked[3] = ((packed[2] >> 4) & 0x0f0f0f0f) | (((packed[1] >> 6) & 0x03030303) << 4);
    const __m128i sc_m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(unpacked));
    const __m256 scales = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sc_m));
    const __m256 mins = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sc_m, 8)));
    const float d = f16(block), dmin = f16(block + 2);
    __m256i q[8];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i bytes = load32(block + 16 + 32 * j);
      q[2 * j] = _mm256_and_si256(bytes, low4);
      q[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b) p[b] = dot_unsigned(q[b], load32(xs + 32 * b));
      const __m256 dxs = _mm256_loadu_ps(x[c].scales + 8 * sb);
      const __m256 x_sums = _mm256_mul_ps(_mm256_cvtepi32_ps(sums32(x[c].sums16 + 16 * sb)), dxs);
      const __m256 codes = _mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)), dxs);
      acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(codes, scales), _mm256_set1_ps(d), acc[c]);
      acc[c] = _mm256_fnmadd_ps(_mm256_mul_ps(x_sums, mins), _mm256_set1_ps(dmin), acc[c]);
    }
  }
  finish<C>(acc, out);
}

// Q6_K: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales (one
// per 16 values), f16 d. value = d * sc * (q - 32). Half n of 128 values:
// sub-block 4n+k takes the low (k < 2) or high nibbles of ql[64n + 32(k%2)..]
// and bits 2k..2k+1 of qh[32n..32n+31].
template <int C>
void dot_q6_k(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(0x03);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 210 * sb;
    prefetch_block(block, 210);
    const __m128i scales16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192));
    const __m256i scales = _mm256_cvtepi8_epi16(scales16);
    const float d = f16(block + 208);
    __m256i q[8], pair[8];
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
      const __m256i ql0 = load32(block + 64 * n), ql1 = load32(block + 64 * n + 32);
      const __m256i qh = load32(block + 128 + 32 * n);
      const __m256i low[4] = {_mm256_and_si256(ql0, low4), _mm256_and_si256(ql1, low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4)};
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), two);
        q[4 * n + k] = _mm256_or_si256(low[k], _mm256_slli_epi16(high, 4));
        pair[4 * n + k] = pair_scales(scales16, 4 * n + k);
      }
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b)
        p[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(q[b], load32(xs + 32 * b)), pair[b]);
      // The -32 offset: 32 x sum over 16-groups of scale x sum(x).
      const __m256i offsets = _mm256_madd_epi16(scales, load32(x[c].sums16 + 16 * sb));
      const __m256i net = _mm256_sub_epi32(totals(p), _mm256_slli_epi32(offsets, 5));
      acc[c] = _mm256_fmadd_ps(
          _mm256_mul_ps(_mm256_cvtepi32_ps(net), _mm256_loadu_ps(x[c].scales + 8 * sb)),
          _mm256_set1_ps(d), acc[c]);
    }
  }
  finish<C>(acc, out);
}

// Q2_K: 16 scale bytes (low nibble scale, high nibble min, per 16 values), 64
// bytes of 2-bit codes, f16 d, f16 dmin. Sub-block 4n+j is bits 2j..2j+1 of
// bytes 32n..32n+31. value = d * sc * q - dmin * m.
template <int C>
void dot_q2_k(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  const __m256i two = _mm256_set1_epi8(0x03);
  const __m128i low4 = _mm_set1_epi8(0x0F);
  // Sub-block j of a half: [scale 2j x 8 | scale 2j + 1 x 8] from the half's
  // eight int16 scales, present in both 128-bit lanes.
  const __m256i pick[4] = {
      _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3,
                       2, 3, 2, 3, 2, 3),
      _mm256_setr_epi8(4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7,
                       6, 7, 6, 7, 6, 7),
      _mm256_setr_epi8(8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10,
                       11, 10, 11, 10, 11, 10, 11, 10, 11),
      _mm256_setr_epi8(12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14,
                       15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15)};
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 84 * sb;
    prefetch_block(block, 84);
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
    const __m256i scales = _mm256_cvtepu8_epi16(_mm_and_si128(packed, low4));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
    const float d = f16(block + 80), dmin = f16(block + 82);
    __m256i q[8], pair[8];
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
      const __m256i codes = load32(block + 16 + 32 * n);
      const __m256i half_scales = n == 0 ? _mm256_permute2x128_si256(scales, scales, 0x00)
                                         : _mm256_permute2x128_si256(scales, scales, 0x11);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        q[4 * n + j] = _mm256_and_si256(_mm256_srli_epi16(codes, 2 * j), two);
        pair[4 * n + j] = _mm256_shuffle_epi8(half_scales, pick[j]);
      }
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b)
        p[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(q[b], load32(xs + 32 * b)), pair[b]);
      const __m256i min_sums = _mm256_madd_epi16(mins, load32(x[c].sums16 + 16 * sb));
      const __m256 dxs = _mm256_loadu_ps(x[c].scales + 8 * sb);
      acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)), dxs), _mm256_set1_ps(d),
                               acc[c]);
      acc[c] = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(min_sums), dxs),
                                _mm256_set1_ps(dmin), acc[c]);
    }
  }
  finish<C>(acc, out);
}

// IQ4_XS: f16 d, le16 of high scale bits, 4 bytes of low scale bits, 128 bytes
// of nibbles indexing kvalues_iq4nl; sub-block b: bytes 16b..16b+15, low
// nibbles values 0-15, high nibbles 16-31. value = d * (ls - 32) * kvalues[q].
template <int C>
void dot_iq4_xs(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  const __m256i table = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kValuesIq4nl.data())));
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i shift4 = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  const __m256i shift2 = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 136 * sb;
    prefetch_block(block, 136);
    // ls of sub-block b: bits 4b..4b+3 of the le32 of low bits, 2b..2b+1 of
    // the le16 of high bits.
    uint32_t low_bits;
    std::memcpy(&low_bits, block + 4, sizeof(low_bits));
    const __m256i low_ls = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int32_t>(low_bits)), shift4),
        _mm256_set1_epi32(0xF));
    const __m256i high_ls =
        _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(block[2] | (block[3] << 8)), shift2),
                         _mm256_set1_epi32(0x3));
    const __m256 scales = _mm256_cvtepi32_ps(_mm256_sub_epi32(
        _mm256_or_si256(low_ls, _mm256_slli_epi32(high_ls, 4)), _mm256_set1_epi32(32)));
    const float d = f16(block);
    __m256i w[8], magnitude[8];
#pragma GCC unroll 4
    for (int b = 0; b < 8; b += 2) {
      // Sub-blocks b and b + 1 from one load: [b low | b+1 low], [b high | b+1 high].
      const __m256i bytes = load32(block + 8 + 16 * b);
      const __m256i low = _mm256_and_si256(bytes, low4);
      const __m256i high = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
      w[b] = _mm256_shuffle_epi8(table, _mm256_permute2x128_si256(low, high, 0x20));
      w[b + 1] = _mm256_shuffle_epi8(table, _mm256_permute2x128_si256(low, high, 0x31));
      magnitude[b] = _mm256_sign_epi8(w[b], w[b]);
      magnitude[b + 1] = _mm256_sign_epi8(w[b + 1], w[b + 1]);
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b)
        p[b] = dot_unsigned(magnitude[b], _mm256_sign_epi8(load32(xs + 32 * b), w[b]));
      acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)),
                                                           _mm256_loadu_ps(x[c].scales + 8 * sb)),
                                             scales),
                               _mm256_set1_ps(d), acc[c]);
    }
  }
  finish<C>(acc, out);
}

/// Byte 8k + j of the result: which byte of a sign word holds the sign bit of
/// value j of group k (bit 7k + j), 0x80 (none) for j = 7.
constexpr std::array<int8_t, 32> make_sign_byte_index() {
  std::array<int8_t, 32> index{};
  for (int v = 0; v < 32; ++v) {
    const int k = v / 8, j = v % 8;
    index[v] = static_cast<int8_t>(j == 7 ? -128 : (7 * k + j) / 8);
  }
  return index;
}
/// The bit within that byte; 1 for j = 7, where the byte is 0 and tests clear.
constexpr std::array<int8_t, 32> make_sign_bit() {
  std::array<int8_t, 32> bits{};
  for (int v = 0; v < 32; ++v) {
    const int k = v / 8, j = v % 8;
    bits[v] = static_cast<int8_t>(j == 7 ? 1 : 1 << ((7 * k + j) % 8));
  }
  return bits;
}
constexpr std::array<int8_t, 32> kSignByteIndex = make_sign_byte_index();
constexpr std::array<int8_t, 32> kSignBit = make_sign_bit();

/// +1 / -1 bytes for the 32 values of an IQ2 sub-block from its le32 word:
/// bit 7k + j negates value j of group k (j < 7); value 7 is negated when
/// the group's other seven signs count odd (ggml's ksigns_iq2xs keeps the
/// count of minus signs even).
GLMRT_ALWAYS_INLINE __m256i iq2_signs(uint32_t word) {
  const __m256i index = load32(kSignByteIndex.data()), bit = load32(kSignBit.data());
  const __m256i one = _mm256_set1_epi8(1), zero = _mm256_setzero_si256();
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(word)), index);
  const __m256i negative = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
  const __m256i count = _mm256_sad_epu8(_mm256_and_si256(negative, one), zero);
  const __m256i parity = _mm256_slli_epi64(_mm256_and_si256(count, _mm256_set1_epi64x(1)), 56);
  return _mm256_or_si256(_mm256_or_si256(negative, _mm256_sub_epi8(zero, parity)), one);
}

// IQ2_XXS: f16 d, then per 32 values 4 grid indices (bytes) and a le32 of
// four 7-bit sign indices and a 4-bit scale ls. value = d * (0.5 + ls) / 4 *
// grid value * sign.
template <int C>
void dot_iq2_xxs(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 66 * sb;
    prefetch_block(block, 66);
    __m256i grid[8], sign[8];
    // Table loads, not gathers: measured faster (a gather of four u64 costs
    // more than four loads and inserts on Zen 3).
#pragma GCC unroll 8
    for (int b = 0; b < 8; ++b) {
      const uint8_t* group = block + 2 + 8 * b;
      uint32_t signs;
      std::memcpy(&signs, group + 4, sizeof(signs));
      grid[b] = _mm256_setr_epi64x(static_cast<int64_t>(ggml::kIq2xxsGrid[group[0]]),
                                   static_cast<int64_t>(ggml::kIq2xxsGrid[group[1]]),
                                   static_cast<int64_t>(ggml::kIq2xxsGrid[group[2]]),
                                   static_cast<int64_t>(ggml::kIq2xxsGrid[group[3]]));
      sign[b] = iq2_signs(signs);
    }
    // ls: the top 4 bits of each sub-block's 8 bytes, groups 0-3 then 4-7.
    const __m256i first = _mm256_srli_epi64(load32(block + 2), 60);
    const __m256i second = _mm256_srli_epi64(load32(block + 34), 60);
    const __m256i interleaved = _mm256_or_si256(first, _mm256_slli_epi64(second, 32));
    const __m256 ls = _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_permutevar8x32_epi32(
                                        interleaved, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7))),
                                    _mm256_set1_ps(0.5f));
    const float quarter_d = 0.25f * f16(block);
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b)
        p[b] = dot_unsigned(grid[b], _mm256_sign_epi8(load32(xs + 32 * b), sign[b]));
      acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)),
                                                           _mm256_loadu_ps(x[c].scales + 8 * sb)),
                                             ls),
                               _mm256_set1_ps(quarter_d), acc[c]);
    }
  }
  finish<C>(acc, out);
}

/// The kernel of one type at both widths.
#define GLMRT_GGML_KERNEL(name)   \
  GgmlKernel {                    \
    &name<1>, &name<kGgmlColumns> \
  }

}  // namespace

bool has_ggml_int_kernel(uint32_t element_type) {
  return ggml_kernel(element_type).one != nullptr;
}

GgmlKernel ggml_kernel(uint32_t element_type) {
  if (!plugin::is_ggml_blocks(element_type)) return {};
  switch (plugin::ggml_type_of(element_type)) {
    case GLMRT_GGML_Q8_0:
      return GLMRT_GGML_KERNEL(dot_q8_0);
    case GLMRT_GGML_Q2_K:
      return GLMRT_GGML_KERNEL(dot_q2_k);
    case GLMRT_GGML_Q4_K:
      return GLMRT_GGML_KERNEL(dot_q4_k);
    case GLMRT_GGML_Q6_K:
      return GLMRT_GGML_KERNEL(dot_q6_k);
    case GLMRT_GGML_IQ2_XXS:
      return GLMRT_GGML_KERNEL(dot_iq2_xxs);
    case GLMRT_GGML_IQ4_XS:
      return GLMRT_GGML_KERNEL(dot_iq4_xs);
    default:
      return {};
  }
}

}  // namespace glmrt::kernels_avx2
