// kv/row_math.h for baseline x86-64: plain loops the compiler vectorizes
// with the SSE2 lanes every x86-64 has.
#include <algorithm>
#include <cstring>

#include "row_math_variants.h"

namespace glmrt::row_math::portable {
namespace {

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

void widen_bf16(std::span<const uint16_t> in, std::span<float> out) {
  const size_t n = in.size();
  for (size_t i = 0; i < n; ++i) {
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

// Head by head over all keys: the inner loop runs along contiguous dots and
// vectorizes (a compare and mask for the max), where key by key the max
// compiled to a branch that random signs mispredict half the time.
void relu_weighted_sums(std::span<const float> weights, const float* dots, int64_t stride,
                        std::span<float> out) {
  const int64_t n = static_cast<int64_t>(out.size());
  std::fill(out.begin(), out.end(), 0.f);
  for (size_t h = 0; h < weights.size(); ++h) {
    const float w = weights[h];
    const float* d = dots + static_cast<int64_t>(h) * stride;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] += (d[i] < 0.f ? 0.f : d[i]) * w;
  }
}

}  // namespace
}  // namespace glmrt::row_math::portable

namespace glmrt::row_math {

const RowMathVariant kPortableRowMath = {"portable",
                                         portable::widen_bf16,
                                         portable::dot,
                                         portable::axpy,
                                         portable::scaled_dots,
                                         portable::weighted_row_sum,
                                         portable::relu_weighted_sums};

}  // namespace glmrt::row_math
