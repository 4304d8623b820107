// kv/row_math.h with AVX2 + FMA: the attention's and the indexer's scans
// over cached keys. Compiled into the baseline core through target
// attributes and called only where the CPU has both (row_math.cpp).
//
// The order of every sum is spelled out: 8 lanes of fused multiply-adds, the
// lanes added left to right, and the ends of rows computed the way GCC 12
// compiled these loops when the whole core was built for the build machine's
// CPU (fused or not, in vector blocks or one value at a time). So an AVX2
// machine computes what it did before the core became portable, bit for bit,
// whatever compiler builds it.
#include <glmrt/base/cpu_features.h>

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "row_math_variants.h"

namespace glmrt::row_math::avx2 {
namespace {

GLMRT_TARGET_AVX2_FMA float horizontal_sum(__m256 v) {
  const __m128 halves = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
}

// Four dots sharing one query: each query vector load feeds four FMAs.
GLMRT_TARGET_AVX2_FMA void four_dots(const float* q, const float* k0, const float* k1,
                                     const float* k2, const float* k3, int64_t n, float* out) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 qv = _mm256_loadu_ps(q + j);
    a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + j), a0);
    a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k1 + j), a1);
    a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k2 + j), a2);
    a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k3 + j), a3);
  }
  float s0 = horizontal_sum(a0), s1 = horizontal_sum(a1), s2 = horizontal_sum(a2),
        s3 = horizontal_sum(a3);
  if (j + 4 <= n) {
    for (int64_t e = j; e < j + 4; ++e) {
      s0 += q[e] * k0[e];
      s1 += q[e] * k1[e];
      s2 += q[e] * k2[e];
      s3 += q[e] * k3[e];
    }
    j += 4;
  }
  for (; j < n; ++j) {
    s0 = std::fma(q[j], k0[j], s0);
    s1 = std::fma(q[j], k1[j], s1);
    s2 = std::fma(q[j], k2[j], s2);
    s3 = std::fma(q[j], k3[j], s3);
  }
  out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
}

// acc += w0 r0 + w1 r1 + w2 r2 + w3 r3: one load and store of acc per four rows.
GLMRT_TARGET_AVX2_FMA void four_axpys(const float* w, const float* r0, const float* r1,
                                      const float* r2, const float* r3, float* acc, int64_t n) {
  const __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(w[1]), w2 = _mm256_set1_ps(w[2]),
               w3 = _mm256_set1_ps(w[3]);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 a = _mm256_loadu_ps(acc + j);
    a = _mm256_fmadd_ps(w0, _mm256_loadu_ps(r0 + j), a);
    a = _mm256_fmadd_ps(w1, _mm256_loadu_ps(r1 + j), a);
    a = _mm256_fmadd_ps(w2, _mm256_loadu_ps(r2 + j), a);
    a = _mm256_fmadd_ps(w3, _mm256_loadu_ps(r3 + j), a);
    _mm256_storeu_ps(acc + j, a);
  }
  for (; j < n; ++j) {
    const float terms =
        std::fma(w[3], r3[j], std::fma(w[2], r2[j], std::fma(w[0], r0[j], w[1] * r1[j])));
    acc[j] += terms;
  }
}

GLMRT_TARGET_AVX2_FMA void widen_bf16(std::span<const uint16_t> in, std::span<float> out) {
  const int64_t n = static_cast<int64_t>(in.size());
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in.data() + i));
    const __m256i wide = _mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16);
    _mm256_storeu_ps(out.data() + i, _mm256_castsi256_ps(wide));
  }
  for (; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(&out[i], &bits, sizeof(bits));
  }
}

// Lane l sums the products l, l + 8, ...; the last n % 8 go to lane 0; then
// the lanes add up from lane 0.
GLMRT_TARGET_AVX2_FMA float dot_of(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), acc);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (; j < n; ++j) lanes[0] = std::fma(a[j], b[j], lanes[0]);
  float sum = 0.f;
  for (float lane : lanes) sum += lane;
  return sum;
}

GLMRT_TARGET_AVX2_FMA float dot(std::span<const float> a, const float* b) {
  return dot_of(a.data(), b, static_cast<int64_t>(a.size()));
}

GLMRT_TARGET_AVX2_FMA void axpy_of(float a, const float* x, float* y, int64_t n) {
  const __m256 av = _mm256_set1_ps(a);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(y + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
  for (; j < n; ++j) y[j] = std::fma(a, x[j], y[j]);
}

GLMRT_TARGET_AVX2_FMA void axpy(float a, std::span<const float> x, std::span<float> y) {
  axpy_of(a, x.data(), y.data(), static_cast<int64_t>(y.size()));
}

GLMRT_TARGET_AVX2_FMA void scaled_dots(RowBlock queries, RowBlock keys, int64_t width, float scale,
                                       std::span<float> out, int64_t out_stride) {
  for (int64_t i = 0; i < queries.rows; ++i) {
    const float* q = queries.row(i);
    float* o = out.data() + i * out_stride;
    int64_t j = 0;
    for (; j + 4 <= keys.rows; j += 4)
      four_dots(q, keys.row(j), keys.row(j + 1), keys.row(j + 2), keys.row(j + 3), width, o + j);
    for (; j < keys.rows; ++j) o[j] = dot_of(q, keys.row(j), width);
    for (j = 0; j < keys.rows; ++j) o[j] *= scale;
  }
}

GLMRT_TARGET_AVX2_FMA void weighted_row_sum(std::span<const float> weights, RowBlock rows,
                                            std::span<float> acc) {
  const int64_t n = static_cast<int64_t>(acc.size());
  int64_t j = 0;
  for (; j + 4 <= rows.rows; j += 4)
    four_axpys(weights.data() + j, rows.row(j), rows.row(j + 1), rows.row(j + 2), rows.row(j + 3),
               acc.data(), n);
  for (; j < rows.rows; ++j) axpy_of(weights[j], rows.row(j), acc.data(), n);
}

// Eight keys at a time, each lane its own chain of fused multiply-adds from
// head 0 up. The max is a compare and blend (NaN kept), as in std::max(d, 0).
GLMRT_TARGET_AVX2_FMA void relu_weighted_sums(std::span<const float> weights, const float* dots,
                                              int64_t stride, std::span<float> out) {
  const int64_t n = static_cast<int64_t>(out.size()), heads = static_cast<int64_t>(weights.size());
  const __m256 zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 total = zero;
    for (int64_t h = 0; h < heads; ++h) {
      const __m256 d = _mm256_loadu_ps(dots + h * stride + i);
      const __m256 relu = _mm256_blendv_ps(zero, d, _mm256_cmp_ps(d, zero, _CMP_NLT_UQ));
      total = _mm256_fmadd_ps(relu, _mm256_set1_ps(weights[h]), total);
    }
    _mm256_storeu_ps(out.data() + i, total);
  }
  for (; i < n; ++i) {
    float total = 0.f;
    for (int64_t h = 0; h < heads; ++h) {
      const float d = dots[h * stride + i];
      total = std::fma(d < 0.f ? 0.f : d, weights[h], total);
    }
    out[i] = total;
  }
}

}  // namespace
}  // namespace glmrt::row_math::avx2

namespace glmrt::row_math {

const RowMathVariant kAvx2RowMath = {"avx2",
                                     avx2::widen_bf16,
                                     avx2::dot,
                                     avx2::axpy,
                                     avx2::scaled_dots,
                                     avx2::weighted_row_sum,
                                     avx2::relu_weighted_sums};

}  // namespace glmrt::row_math
