// Small AVX2 helpers shared by the kernels (SIMD sources only).
#pragma once

#include <immintrin.h>

#include <cstdint>

#define GLMRT_ALWAYS_INLINE inline __attribute__((always_inline))

namespace glmrt::kernels_avx2 {

/// How far ahead of the current read a kernel streaming weights from RAM asks
/// for them. The hardware prefetchers ramp up per stream and stop at 4 KiB
/// pages, which left S = 1 int8 at ~0.77 of the read baseline; asking one page
/// ahead in software lifts it to ~0.9 (bench/kernels, 2 threads, Zen 3).
constexpr int kPrefetchBytes = 4096;

/// Prefetches the cache line kPrefetchBytes past `p` (never faults, so reading
/// past the end of a weight buffer is harmless).
GLMRT_ALWAYS_INLINE void prefetch_ahead(const void* p) {
  _mm_prefetch(static_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T0);
}

GLMRT_ALWAYS_INLINE float horizontal_sum(__m256 v) {
  const __m128 pairs = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 quads = _mm_add_ps(pairs, _mm_movehl_ps(pairs, pairs));
  return _mm_cvtss_f32(_mm_add_ss(quads, _mm_movehdup_ps(quads)));
}

GLMRT_ALWAYS_INLINE int32_t horizontal_sum(__m256i v) {
  const __m128i pairs = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i quads = _mm_add_epi32(pairs, _mm_unpackhi_epi64(pairs, pairs));
  return _mm_cvtsi128_si32(_mm_add_epi32(quads, _mm_shuffle_epi32(quads, 0b01)));
}

GLMRT_ALWAYS_INLINE float horizontal_max(__m256 v) {
  const __m128 pairs = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 quads = _mm_max_ps(pairs, _mm_movehl_ps(pairs, pairs));
  return _mm_cvtss_f32(_mm_max_ss(quads, _mm_movehdup_ps(quads)));
}

/// Loads 8 bf16 values (the upper halves of f32s) as 8 floats.
GLMRT_ALWAYS_INLINE __m256 load_bf16x8(const uint16_t* p) {
  const __m256i widened =
      _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(widened, 16));
}

}  // namespace glmrt::kernels_avx2
