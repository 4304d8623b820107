#include <glmrt/kv/row_math.h>

#include <cstring>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace glmrt {
namespace {

#ifdef __AVX2__
float horizontal_sum(__m256 v) {
  const __m128 halves = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
}

// Four dots sharing one query: each query vector load feeds four FMAs.
void four_dots(const float* q, const float* k0, const float* k1, const float* k2, const float* k3,
               int64_t n, float* out) {
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
  for (; j < n; ++j) {
    s0 += q[j] * k0[j];
    s1 += q[j] * k1[j];
    s2 += q[j] * k2[j];
    s3 += q[j] * k3[j];
  }
  out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
}

// acc += w0 r0 + w1 r1 + w2 r2 + w3 r3: one load and store of acc per four rows.
void four_axpys(const float* w, const float* r0, const float* r1, const float* r2, const float* r3,
                float* acc, int64_t n) {
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
  for (; j < n; ++j) acc[j] += w[0] * r0[j] + w[1] * r1[j] + w[2] * r2[j] + w[3] * r3[j];
}
#else
void four_dots(const float* q, const float* k0, const float* k1, const float* k2, const float* k3,
               int64_t n, float* out) {
  float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (int64_t j = 0; j < n; ++j) {
    s0 += q[j] * k0[j];
    s1 += q[j] * k1[j];
    s2 += q[j] * k2[j];
    s3 += q[j] * k3[j];
  }
  out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
}

void four_axpys(const float* w, const float* r0, const float* r1, const float* r2, const float* r3,
                float* acc, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    acc[j] += w[0] * r0[j] + w[1] * r1[j] + w[2] * r2[j] + w[3] * r3[j];
}
#endif

}  // namespace

void widen_bf16(std::span<const uint16_t> in, std::span<float> out) {
  const int64_t n = static_cast<int64_t>(in.size());
  int64_t i = 0;
#ifdef __AVX2__
  for (; i + 8 <= n; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in.data() + i));
    const __m256i wide = _mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16);
    _mm256_storeu_ps(out.data() + i, _mm256_castsi256_ps(wide));
  }
#endif
  for (; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(&out[i], &bits, sizeof(bits));
  }
}

float dot(std::span<const float> a, const float* b) {
  float sum = 0.f;
  const int64_t n = static_cast<int64_t>(a.size());
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

void axpy(float a, std::span<const float> x, std::span<float> y) {
  const int64_t n = static_cast<int64_t>(y.size());
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] += a * x[j];
}

void scaled_dots(RowBlock queries, RowBlock keys, int64_t width, float scale, std::span<float> out,
                 int64_t out_stride) {
  for (int64_t i = 0; i < queries.rows; ++i) {
    const float* q = queries.row(i);
    float* o = out.data() + i * out_stride;
    int64_t j = 0;
    for (; j + 4 <= keys.rows; j += 4)
      four_dots(q, keys.row(j), keys.row(j + 1), keys.row(j + 2), keys.row(j + 3), width, o + j);
    for (; j < keys.rows; ++j) o[j] = dot({q, static_cast<size_t>(width)}, keys.row(j));
    for (j = 0; j < keys.rows; ++j) o[j] *= scale;
  }
}

void weighted_row_sum(std::span<const float> weights, RowBlock rows, std::span<float> acc) {
  const int64_t n = static_cast<int64_t>(acc.size());
  int64_t j = 0;
  for (; j + 4 <= rows.rows; j += 4)
    four_axpys(weights.data() + j, rows.row(j), rows.row(j + 1), rows.row(j + 2), rows.row(j + 3),
               acc.data(), n);
  for (; j < rows.rows; ++j) axpy(weights[j], {rows.row(j), static_cast<size_t>(n)}, acc);
}

}  // namespace glmrt
