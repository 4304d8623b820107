// What the int8-activation kernels of ggml blocks share (SIMD sources
// only): loading block fields, integer dots of 32 codes with 32 int8
// activations, and the C accumulators of a kernel that meets C activation
// rows with each decoded super-block. The kernels: ggml_dots_k.cpp (q8_0,
// q4_0 and the K-quants), ggml_dots_iq.cpp (i-quants). Every kernel decodes a block as
// ggml-common.h lays it out (the layouts plugin-support/ggml/ reads); per 32
// inputs it takes the integer dot of the codes with x, then per super-block
// one float step with the block's scales (and mins or offsets, through the
// sums of x). Every output sums its blocks in order, the same for any C.
//
// Each kernel source is compiled twice: as is (namespace ggml_dots, AVX2's
// maddubs + madd) and, through ggml_dots_*_vnni.cpp with -mavxvnni and
// GLMRT_GGML_DOTS_VNNI, into namespace ggml_dots_vnni with vpdpbusd. No pair
// of products maddubs adds can saturate int16 in these kernels (the unsigned
// side is at most 128: |w| after the sign trick, or codes and grid values
// below 64), so both give the same int32 lanes and the same bits.
#pragma once

#include "ggml_dots.h"
#include "ggml_matmul.h"
#include "simd.h"

#include <cstring>

#if defined(GLMRT_GGML_DOTS_VNNI)
#define GLMRT_GGML_DOTS ggml_dots_vnni
#else
#define GLMRT_GGML_DOTS ggml_dots
#endif

namespace glmrt::kernels_avx2::GLMRT_GGML_DOTS {

GLMRT_ALWAYS_INLINE float f16(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return _cvtsh_ss(bits);  // exact, as ggml's conversion, for every finite half
}

GLMRT_ALWAYS_INLINE __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

/// Q4_K's eight 6-bit scales then eight 6-bit mins (bytes 4-15 of a block,
/// as ggml's get_scale_min_k4 unpacks them), one per byte.
GLMRT_ALWAYS_INLINE void q4_k_scales_mins(const uint8_t* block, uint8_t (&out)[16]) {
  uint32_t packed[3], unpacked[4];
  std::memcpy(packed, block + 4, 12);
  unpacked[0] = packed[0] & 0x3f3f3f3f;
  unpacked[1] = (packed[2] & 0x0f0f0f0f) | (((packed[0] >> 6) & 0x03030303) << 4);
  unpacked[2] = packed[1] & 0x3f3f3f3f;
  unpacked[3] = ((packed[2] >> 4) & 0x0f0f0f0f) | (((packed[1] >> 6) & 0x03030303) << 4);
  std::memcpy(out, unpacked, sizeof(out));
}

/// Q4_0's 32 codes (0-15): value j the low nibble of byte j, value j + 16
/// its high one.
GLMRT_ALWAYS_INLINE __m256i q4_0_codes(const uint8_t* block) {
  const __m128i low4 = _mm_set1_epi8(0x0F);
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4),
                          _mm_and_si128(bytes, low4));
}

/// int32 lanes, lane k the sum of u[j] * x[j] for j in 4k..4k+3, for 32
/// unsigned u and signed x whose pairs u[2i] x[2i] + u[2i+1] x[2i+1] fit in
/// int16 (maddubs would saturate them; vpdpbusd does not).
GLMRT_ALWAYS_INLINE __m256i dot_unsigned(__m256i u, __m256i x) {
#if defined(GLMRT_GGML_DOTS_VNNI)
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, x);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1));
#endif
}

/// The same for 32 signed w: |w| <= 128 after the sign trick, so a pair lies
/// in [-32768, 32512] for any int8 x.
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

/// Lane b: the total of p[b] with each 16-value half weighted by its scale.
/// scales[h] holds, for sub-blocks 4h..4h+3, the scales of their first
/// halves then of their second halves (the order two hadd levels leave).
GLMRT_ALWAYS_INLINE __m256i scaled_totals(const __m256i (&p)[8], const __m256i (&scales)[2]) {
  const __m256i g0 = _mm256_mullo_epi32(
      _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3])), scales[0]);
  const __m256i g1 = _mm256_mullo_epi32(
      _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7])), scales[1]);
  return _mm256_add_epi32(_mm256_permute2x128_si256(g0, g1, 0x20),
                          _mm256_permute2x128_si256(g0, g1, 0x31));
}

/// 8 int32 lanes: the sums of x over 32 inputs, from 16 sums of 16.
GLMRT_ALWAYS_INLINE __m256i sums32(const int16_t* sums16) {
  return _mm256_madd_epi16(load32(sums16), _mm256_set1_epi16(1));
}

/// The scales of sub-block b's 32 products from 16 int8 scales (one per 16
/// inputs), as scaled_dot takes them: int16 [s(2b) x 8 | s(2b+1) x 8], one
/// per pair maddubs gives, or int32 [s(2b) x 4 | s(2b+1) x 4], one per lane
/// of vpdpbusd.
GLMRT_ALWAYS_INLINE __m256i dot_scales(__m128i scales16, int b) {
  const char first = static_cast<char>(2 * b), second = static_cast<char>(2 * b + 1);
#if defined(GLMRT_GGML_DOTS_VNNI)
  const __m128i pick = _mm_setr_epi8(first, first, first, first, second, second, second, second, 0,
                                     0, 0, 0, 0, 0, 0, 0);
  return _mm256_cvtepi8_epi32(_mm_shuffle_epi8(scales16, pick));
#else
  const __m128i pick = _mm_setr_epi8(first, first, first, first, first, first, first, first, second,
                                     second, second, second, second, second, second, second);
  return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales16, pick));
#endif
}

/// dot_unsigned with each 16-value half scaled by its dot_scales: the same
/// int32 lanes either way (scale x pair sums, exact in int32).
GLMRT_ALWAYS_INLINE __m256i scaled_dot(__m256i u, __m256i x, __m256i scales) {
#if defined(GLMRT_GGML_DOTS_VNNI)
  return _mm256_mullo_epi32(dot_unsigned(u, x), scales);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), scales);
#endif
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

}  // namespace glmrt::kernels_avx2::GLMRT_GGML_DOTS
