// The vectors a lane kernel (ggml_lanes.h) runs on: 8 packed weight rows in
// the 32-bit lanes of an AVX-VNNI ymm (Lanes8), or 16 in an AVX-512 VNNI zmm
// (Lanes16). Every operation works lane by lane, so a row's result is the
// same bits at either width; the wider one does twice the rows per
// instruction where the CPU runs 512-bit vpdpbusd at the 256-bit rate.
//
// A 16-row pack is two 8-row packs interleaved by 32-byte units (rows 0-7
// then rows 8-15 of each unit), so every offset of the 8-row layout is
// multiplied by kWiden and a field of one value per row loads as one vector.
#pragma once

#include "simd.h"

#include <cstdint>
#include <cstring>

// Always inlined: each width is compiled with its own ISA flags, and no
// out-of-line copy may be shared between them.
#define GLMRT_LANE_OP static GLMRT_ALWAYS_INLINE

namespace glmrt::kernels_avx2::lanes {

GLMRT_ALWAYS_INLINE int32_t four_inputs(const int8_t* x) {
  int32_t v;
  std::memcpy(&v, x, sizeof(v));
  return v;
}

#if defined(__AVXVNNI__)
struct Lanes8 {
  using I = __m256i;
  using F = __m256;
  static constexpr int kRows = 8;
  static constexpr int kWiden = 1;
  GLMRT_LANE_OP I izero() { return _mm256_setzero_si256(); }
  GLMRT_LANE_OP I load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const I*>(p));
  }
  GLMRT_LANE_OP I iset(int32_t v) { return _mm256_set1_epi32(v); }
  /// acc + per lane the dot of its 4 unsigned codes with 4 signed inputs.
  GLMRT_LANE_OP I dot(I acc, I codes, const int8_t* x) {
    return _mm256_dpbusd_avx_epi32(acc, codes, _mm256_set1_epi32(four_inputs(x)));
  }
  GLMRT_LANE_OP I add(I a, I b) { return _mm256_add_epi32(a, b); }
  GLMRT_LANE_OP I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  GLMRT_LANE_OP I mul(I a, I b) { return _mm256_mullo_epi32(a, b); }
  GLMRT_LANE_OP I shl5(I a) { return _mm256_slli_epi32(a, 5); }
  GLMRT_LANE_OP I bytes(char v) { return _mm256_set1_epi8(v); }
  GLMRT_LANE_OP I and_(I a, I b) { return _mm256_and_si256(a, b); }
  GLMRT_LANE_OP I or_(I a, I b) { return _mm256_or_si256(a, b); }
  GLMRT_LANE_OP I srl32(I a, int n) { return _mm256_srli_epi32(a, n); }
  GLMRT_LANE_OP I sll32(I a, int n) { return _mm256_slli_epi32(a, n); }
  GLMRT_LANE_OP I srl16(I a, int n) { return _mm256_srli_epi16(a, n); }
  /// 32 bytes at p; Lanes16 adds the 32 at p + second above them (the
  /// same piece of the next group of rows packed in place).
  GLMRT_LANE_OP I load_groups(const uint8_t* p, int64_t) { return load(p); }
  /// The 8 f16 at p as floats; Lanes16 adds the 8 at p + second.
  GLMRT_LANE_OP F halves_groups(const uint8_t* p, int64_t) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  GLMRT_LANE_OP I sll16(I a, int n) { return _mm256_slli_epi16(a, n); }
  /// The 8 int8 at p as int32; Lanes16 adds the 8 at p + second.
  GLMRT_LANE_OP I int8s_groups(const uint8_t* p, int64_t) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  GLMRT_LANE_OP F fzero() { return _mm256_setzero_ps(); }
  GLMRT_LANE_OP F fload(const uint8_t* p) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  }
  GLMRT_LANE_OP F fset(float v) { return _mm256_set1_ps(v); }
  GLMRT_LANE_OP F fadd(F a, F b) { return _mm256_add_ps(a, b); }
  GLMRT_LANE_OP F fmul(F a, F b) { return _mm256_mul_ps(a, b); }
  GLMRT_LANE_OP F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  GLMRT_LANE_OP F fnmadd(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  GLMRT_LANE_OP F to_float(I a) { return _mm256_cvtepi32_ps(a); }
  GLMRT_LANE_OP void store(float* out, F v) { _mm256_storeu_ps(out, v); }
};
#endif

#if defined(__AVX512F__) && defined(__AVX512VNNI__)
struct Lanes16 {
  using I = __m512i;
  using F = __m512;
  static constexpr int kRows = 16;
  static constexpr int kWiden = 2;
  GLMRT_LANE_OP I izero() { return _mm512_setzero_si512(); }
  GLMRT_LANE_OP I load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  GLMRT_LANE_OP I iset(int32_t v) { return _mm512_set1_epi32(v); }
  GLMRT_LANE_OP I dot(I acc, I codes, const int8_t* x) {
    return _mm512_dpbusd_epi32(acc, codes, _mm512_set1_epi32(four_inputs(x)));
  }
  GLMRT_LANE_OP I add(I a, I b) { return _mm512_add_epi32(a, b); }
  GLMRT_LANE_OP I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  GLMRT_LANE_OP I mul(I a, I b) { return _mm512_mullo_epi32(a, b); }
  GLMRT_LANE_OP I shl5(I a) { return _mm512_slli_epi32(a, 5); }
  GLMRT_LANE_OP I bytes(char v) { return _mm512_set1_epi8(v); }
  GLMRT_LANE_OP I and_(I a, I b) { return _mm512_and_si512(a, b); }
  GLMRT_LANE_OP I or_(I a, I b) { return _mm512_or_si512(a, b); }
  GLMRT_LANE_OP I srl32(I a, int n) { return _mm512_srli_epi32(a, n); }
  GLMRT_LANE_OP I sll32(I a, int n) { return _mm512_slli_epi32(a, n); }
  GLMRT_LANE_OP I srl16(I a, int n) { return _mm512_srli_epi16(a, n); }
  GLMRT_LANE_OP I load_groups(const uint8_t* p, int64_t second) {
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + second));
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
  }
  GLMRT_LANE_OP F halves_groups(const uint8_t* p, int64_t second) {
    const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + second));
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1));
  }
  GLMRT_LANE_OP I sll16(I a, int n) { return _mm512_slli_epi16(a, n); }
  GLMRT_LANE_OP I int8s_groups(const uint8_t* p, int64_t second) {
    const __m128i low = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    const __m128i high = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + second));
    return _mm512_cvtepi8_epi32(_mm_unpacklo_epi64(low, high));
  }
  GLMRT_LANE_OP F fzero() { return _mm512_setzero_ps(); }
  GLMRT_LANE_OP F fload(const uint8_t* p) { return _mm512_loadu_ps(p); }
  GLMRT_LANE_OP F fset(float v) { return _mm512_set1_ps(v); }
  GLMRT_LANE_OP F fadd(F a, F b) { return _mm512_add_ps(a, b); }
  GLMRT_LANE_OP F fmul(F a, F b) { return _mm512_mul_ps(a, b); }
  GLMRT_LANE_OP F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  GLMRT_LANE_OP F fnmadd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  GLMRT_LANE_OP F to_float(I a) { return _mm512_cvtepi32_ps(a); }
  GLMRT_LANE_OP void store(float* out, F v) { _mm512_storeu_ps(out, v); }
};
#endif

}  // namespace glmrt::kernels_avx2::lanes
