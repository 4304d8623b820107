// y = x · Wᵀ through the profile's kernels plugin, with the shape checks the
// plugin boundary cannot do.
#pragma once

#include <glmrt/weights/kernels_backend.h>
#include <glmrt/weights/matrix.h>

#include <span>

namespace glmrt {

/// x is [S, w.cols()] row-major, y is [S, w.rows()]; `hints`: GLMRT_PRODUCT_*
/// bits for the plugin (KernelsBackend::matmul).
void linear(KernelsBackend& kernels, std::span<const float> x, int64_t S, const Matrix& w,
            std::span<float> y, uint32_t hints = 0);
/// Same with an arbitrary view (a row slice of a matrix).
void linear(KernelsBackend& kernels, std::span<const float> x, int64_t S,
            const glmrt_weight_view& w, std::span<float> y, uint32_t hints = 0);

/// An f32 row-major buffer [rows, cols] as a weight view (weights computed on
/// the fly). The view borrows `values`.
glmrt_weight_view f32_view(std::span<const float> values, int64_t rows, int64_t cols);

}  // namespace glmrt
