// What kernels-scalar accepts: the checks behind supports() and matmul(),
// each failure described in words for last_error().
#pragma once

#include <glmrt/plugin/weight_format.h>

#include <string>

namespace glmrt::kernels_scalar {

/// Empty when the format is supported, else why not.
std::string check_format(const glmrt_weight_format& format);

/// Empty when the view (shape, stride, scales, pointers) can be multiplied
/// with S rows of x into y, else what is wrong.
std::string check_view(const float* x, int64_t S, const glmrt_weight_view& w, const float* y);

/// "f32", "bf16", "int8", "int4", "int2" or "element type N".
std::string element_name(uint32_t element_type);

}  // namespace glmrt::kernels_scalar
