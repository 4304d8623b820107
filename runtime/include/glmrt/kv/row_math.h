// Vector kernels over f32 rows, for the attention and indexer scans over
// cached keys. Defined out of line in the core, with an AVX2 + FMA variant
// that runs where the CPU has both (kv/row_math_variants.h).
#pragma once

#include <cstdint>
#include <span>

namespace glmrt {

/// A block of rows in row-major storage: row i starts at data + i * stride.
struct RowBlock {
  const float* data = nullptr;
  int64_t rows = 0;
  int64_t stride = 0;
  const float* row(int64_t i) const { return data + i * stride; }
};

/// out = bf16 values widened to f32 (exact: a 16-bit shift).
void widen_bf16(std::span<const uint16_t> in, std::span<float> out);

/// dot(a, b) over a.size() values.
float dot(std::span<const float> a, const float* b);

/// y += a * x.
void axpy(float a, std::span<const float> x, std::span<float> y);

/// out[i * out_stride + j] = scale * dot(queries.row(i), keys.row(j)) over the
/// first `width` values, for every query i and key j.
void scaled_dots(RowBlock queries, RowBlock keys, int64_t width, float scale, std::span<float> out,
                 int64_t out_stride);

/// acc += Σ_j weights[j] * rows.row(j), over acc.size() values.
void weighted_row_sum(std::span<const float> weights, RowBlock rows, std::span<float> acc);

/// out[i] = Σ_h max(dots[h * stride + i], 0) * weights[h], summed from h = 0
/// up, for i < out.size(): the indexer's score of key i from its heads' dot
/// products (a NaN dot stays NaN).
void relu_weighted_sums(std::span<const float> weights, const float* dots, int64_t stride,
                        std::span<float> out);

}  // namespace glmrt
