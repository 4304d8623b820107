// y = x · Wᵀ through the profile's kernels plugin, with the shape checks the
// plugin boundary cannot do.
#pragma once

#include <glmrt/plugin/kernels.h>
#include <glmrt/weights/matrix.h>

#include <span>

namespace glmrt {

/// x is [S, w.cols()] row-major, y is [S, w.rows()].
void linear(plugin::Kernels& kernels, std::span<const float> x, int64_t S, const Matrix& w,
            std::span<float> y);
/// Same with an arbitrary view (a row slice of a matrix).
void linear(plugin::Kernels& kernels, std::span<const float> x, int64_t S,
            const glmrt_weight_view& w, std::span<float> y);

}  // namespace glmrt
