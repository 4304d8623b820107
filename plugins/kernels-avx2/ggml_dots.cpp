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
#include <bit>
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

// Q8_0: per 32 values an f16 d and 32 int8.
float dot_q8_0(const uint8_t* row, int64_t blocks, const int8_t* x, const float* dx,
               const int16_t*) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = row + 34 * b;
    if (b % 2 == 0) prefetch_ahead(block);
    const __m256i p = dot_signed(load32(block + 2), load32(x + 32 * b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(f16(block) * dx[b]), acc);
  }
  return horizontal_sum(acc);
}

// Q4_K: d, dmin, 12 bytes of eight 6-bit scales and mins, 128 bytes of
// nibbles: sub-block 2j is the low nibbles of bytes 32j..32j+31, 2j+1 the high.
// value = d * sc * q - dmin * m.
float dot_q4_k(const uint8_t* row, int64_t blocks, const int8_t* x, const float* dx,
               const int16_t* sums16) {
  __m256 acc = _mm256_setzero_ps();
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
    const int8_t* xs = x + 256 * sb;
    __m256i p[8];
    for (int j = 0; j < 4; ++j) {
      const __m256i bytes = load32(block + 16 + 32 * j);
      p[2 * j] = dot_unsigned(_mm256_and_si256(bytes, low4), load32(xs + 64 * j));
      p[2 * j + 1] = dot_unsigned(_mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4),
                                  load32(xs + 64 * j + 32));
    }
    const __m256 dxs = _mm256_loadu_ps(dx + 8 * sb);
    const __m256 x_sums = _mm256_mul_ps(_mm256_cvtepi32_ps(sums32(sums16 + 16 * sb)), dxs);
    const __m256 codes = _mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)), dxs);
    acc = _mm256_fmadd_ps(_mm256_mul_ps(codes, scales), _mm256_set1_ps(f16(block)), acc);
    acc = _mm256_fnmadd_ps(_mm256_mul_ps(x_sums, mins), _mm256_set1_ps(f16(block + 2)), acc);
  }
  return horizontal_sum(acc);
}

// Q6_K: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales (one
// per 16 values), f16 d. value = d * sc * (q - 32). Half n of 128 values:
// sub-block 4n+k takes the low (k < 2) or high nibbles of ql[64n + 32(k%2)..]
// and bits 2k..2k+1 of qh[32n..32n+31].
float dot_q6_k(const uint8_t* row, int64_t blocks, const int8_t* x, const float* dx,
               const int16_t* sums16) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(0x03);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 210 * sb;
    prefetch_block(block, 210);
    const __m128i scales16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192));
    const int8_t* xs = x + 256 * sb;
    __m256i p[8];
    for (int n = 0; n < 2; ++n) {
      const __m256i ql0 = load32(block + 64 * n), ql1 = load32(block + 64 * n + 32);
      const __m256i qh = load32(block + 128 + 32 * n);
      const __m256i low[4] = {_mm256_and_si256(ql0, low4), _mm256_and_si256(ql1, low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4)};
      for (int k = 0; k < 4; ++k) {
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), two);
        const __m256i q = _mm256_or_si256(low[k], _mm256_slli_epi16(high, 4));
        const int b = 4 * n + k;
        const __m256i pairs = _mm256_maddubs_epi16(q, load32(xs + 32 * b));
        p[b] = _mm256_madd_epi16(pairs, pair_scales(scales16, b));
      }
    }
    // The -32 offset: 32 x sum over 16-groups of scale x sum(x).
    const __m256i offsets =
        _mm256_madd_epi16(_mm256_cvtepi8_epi16(scales16), load32(sums16 + 16 * sb));
    const __m256i net = _mm256_sub_epi32(totals(p), _mm256_slli_epi32(offsets, 5));
    acc = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(net), _mm256_loadu_ps(dx + 8 * sb)),
                          _mm256_set1_ps(f16(block + 208)), acc);
  }
  return horizontal_sum(acc);
}

// Q2_K: 16 scale bytes (low nibble scale, high nibble min, per 16 values), 64
// bytes of 2-bit codes, f16 d, f16 dmin. Sub-block 4n+j is bits 2j..2j+1 of
// bytes 32n..32n+31. value = d * sc * q - dmin * m.
float dot_q2_k(const uint8_t* row, int64_t blocks, const int8_t* x, const float* dx,
               const int16_t* sums16) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i two = _mm256_set1_epi8(0x03);
  const __m128i low4 = _mm_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 84 * sb;
    prefetch_block(block, 84);
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
    const __m128i scales16 = _mm_and_si128(packed, low4);
    const __m128i mins16 = _mm_and_si128(_mm_srli_epi16(packed, 4), low4);
    const int8_t* xs = x + 256 * sb;
    __m256i p[8];
    for (int n = 0; n < 2; ++n) {
      const __m256i codes = load32(block + 16 + 32 * n);
      for (int j = 0; j < 4; ++j) {
        const int b = 4 * n + j;
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(codes, 2 * j), two);
        p[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(q, load32(xs + 32 * b)),
                                 pair_scales(scales16, b));
      }
    }
    const __m256i mins = _mm256_madd_epi16(_mm256_cvtepu8_epi16(mins16), load32(sums16 + 16 * sb));
    const __m256 dxs = _mm256_loadu_ps(dx + 8 * sb);
    acc = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)), dxs),
                          _mm256_set1_ps(f16(block + 80)), acc);
    acc = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(mins), dxs),
                           _mm256_set1_ps(f16(block + 82)), acc);
  }
  return horizontal_sum(acc);
}

// IQ4_XS: f16 d, le16 of high scale bits, 4 bytes of low scale bits, 128 bytes
// of nibbles indexing kvalues_iq4nl; sub-block b: bytes 16b..16b+15, low
// nibbles values 0-15, high nibbles 16-31. value = d * (ls - 32) * kvalues[q].
float dot_iq4_xs(const uint8_t* row, int64_t blocks, const int8_t* x, const float* dx,
                 const int16_t*) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i table = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kValuesIq4nl.data())));
  const __m128i low4 = _mm_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 136 * sb;
    prefetch_block(block, 136);
    const unsigned scales_h = block[2] | (block[3] << 8);
    alignas(16) int32_t ls[8];
    for (int b = 0; b < 8; ++b)
      ls[b] = static_cast<int32_t>((((block[4 + b / 2] >> (4 * (b % 2))) & 0xF) |
                                    (((scales_h >> (2 * b)) & 3) << 4))) -
              32;
    const int8_t* xs = x + 256 * sb;
    __m256i p[8];
    for (int b = 0; b < 8; ++b) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 8 + 16 * b));
      const __m256i index = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4),
                                             _mm_and_si128(bytes, low4));
      p[b] = dot_signed(_mm256_shuffle_epi8(table, index), load32(xs + 32 * b));
    }
    const __m256 scales =
        _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(ls)));
    acc = _mm256_fmadd_ps(
        _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)), _mm256_loadu_ps(dx + 8 * sb)),
                      scales),
        _mm256_set1_ps(f16(block)), acc);
  }
  return horizontal_sum(acc);
}

/// Sign bytes (+1 / -1) of the 8 values of a group, for each 7-bit sign
/// index of IQ2: bit j set negates value j; the eighth sign makes the number
/// of minus signs even (ggml's ksigns_iq2xs).
constexpr std::array<uint64_t, 128> make_sign_bytes() {
  std::array<uint64_t, 128> table{};
  for (unsigned i = 0; i < 128; ++i) {
    const unsigned signs = i | (std::popcount(i) % 2 ? 0x80u : 0u);
    uint64_t bytes = 0;
    for (int j = 0; j < 8; ++j) bytes |= uint64_t{(signs >> j) & 1 ? 0xFFu : 0x01u} << (8 * j);
    table[i] = bytes;
  }
  return table;
}
constexpr std::array<uint64_t, 128> kSignBytes = make_sign_bytes();

// IQ2_XXS: f16 d, then per 32 values 4 grid indices (bytes) and a le32 of
// four 7-bit sign indices and a 4-bit scale ls. value = d * (0.5 + ls) / 4 *
// grid value * sign.
float dot_iq2_xxs(const uint8_t* row, int64_t blocks, const int8_t* x, const float* dx,
                  const int16_t*) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 66 * sb;
    prefetch_block(block, 66);
    const int8_t* xs = x + 256 * sb;
    alignas(32) float ls[8];
    __m256i p[8];
    for (int b = 0; b < 8; ++b) {
      const uint8_t* group = block + 2 + 8 * b;
      uint32_t signs;
      std::memcpy(&signs, group + 4, sizeof(signs));
      const __m256i grid = _mm256_setr_epi64x(static_cast<int64_t>(ggml::kIq2xxsGrid[group[0]]),
                                              static_cast<int64_t>(ggml::kIq2xxsGrid[group[1]]),
                                              static_cast<int64_t>(ggml::kIq2xxsGrid[group[2]]),
                                              static_cast<int64_t>(ggml::kIq2xxsGrid[group[3]]));
      const __m256i sign =
          _mm256_setr_epi64x(static_cast<int64_t>(kSignBytes[signs & 127]),
                             static_cast<int64_t>(kSignBytes[(signs >> 7) & 127]),
                             static_cast<int64_t>(kSignBytes[(signs >> 14) & 127]),
                             static_cast<int64_t>(kSignBytes[(signs >> 21) & 127]));
      p[b] = dot_unsigned(grid, _mm256_sign_epi8(load32(xs + 32 * b), sign));
      ls[b] = 0.5f + static_cast<float>(signs >> 28);
    }
    acc = _mm256_fmadd_ps(
        _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)), _mm256_loadu_ps(dx + 8 * sb)),
                      _mm256_load_ps(ls)),
        _mm256_set1_ps(0.25f * f16(block)), acc);
  }
  return horizontal_sum(acc);
}

}  // namespace

bool has_ggml_int_kernel(uint32_t element_type) {
  return ggml_row_dot(element_type) != nullptr;
}

GgmlRowDot ggml_row_dot(uint32_t element_type) {
  if (!plugin::is_ggml_blocks(element_type)) return nullptr;
  switch (plugin::ggml_type_of(element_type)) {
    case GLMRT_GGML_Q8_0:
      return &dot_q8_0;
    case GLMRT_GGML_Q2_K:
      return &dot_q2_k;
    case GLMRT_GGML_Q4_K:
      return &dot_q4_k;
    case GLMRT_GGML_Q6_K:
      return &dot_q6_k;
    case GLMRT_GGML_IQ2_XXS:
      return &dot_iq2_xxs;
    case GLMRT_GGML_IQ4_XS:
      return &dot_iq4_xs;
    default:
      return nullptr;
  }
}

}  // namespace glmrt::kernels_avx2
