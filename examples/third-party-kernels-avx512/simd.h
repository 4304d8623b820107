// The example spells its intrinsics the SIMDe way (simde_mm512_*). Built with
// AVX-512 flags each one is the native instruction; built with
// KERNELS_AVX512_EMULATED=ON the same source runs portably, so CI on a CPU
// without AVX-512 still checks the kernels' arithmetic, edges and layouts.
// SIMDe 0.7 lacks the 512-bit int/float conversions, spelled out here.
#pragma once

#include <simde/x86/avx512.h>

#include <cmath>
#include <cstdint>

namespace avx512_example {

inline simde__m512 to_float(simde__m512i v) {
#if defined(SIMDE_X86_AVX512F_NATIVE)
  return _mm512_cvtepi32_ps(v);
#else
  alignas(64) int32_t in[16];
  alignas(64) float out[16];
  simde_mm512_store_si512(in, v);
  for (int k = 0; k < 16; ++k) out[k] = static_cast<float>(in[k]);
  return simde_mm512_load_ps(out);
#endif
}

/// Rounds to the nearest integer, ties to even (the current rounding mode).
inline simde__m512i to_int_nearest(simde__m512 v) {
#if defined(SIMDE_X86_AVX512F_NATIVE)
  return _mm512_cvtps_epi32(v);
#else
  alignas(64) float in[16];
  alignas(64) int32_t out[16];
  simde_mm512_store_ps(in, v);
  for (int k = 0; k < 16; ++k) out[k] = static_cast<int32_t>(std::nearbyint(in[k]));
  return simde_mm512_load_si512(out);
#endif
}

// Lane sums and maxima through memory: GCC 12's _mm512_reduce_* warn about
// their own undefined placeholders.
inline float sum_lanes(simde__m512 v) {
  alignas(64) float lanes[16];
  simde_mm512_store_ps(lanes, v);
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  return sum;
}

inline float max_lanes(simde__m512 v) {
  alignas(64) float lanes[16];
  simde_mm512_store_ps(lanes, v);
  float best = lanes[0];
  for (float lane : lanes) best = lane > best ? lane : best;
  return best;
}

/// Asks for the line `distance` bytes past `p` (never faults).
inline void prefetch(const uint8_t* p, int distance) {
  __builtin_prefetch(p + distance, 0, 3);
}

}  // namespace avx512_example
