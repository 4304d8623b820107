#include <glmrt/base/error.h>
#include <glmrt/weights/linear.h>

namespace glmrt {

void linear(KernelsBackend& kernels, std::span<const float> x, int64_t S, const Matrix& w,
            std::span<float> y, uint32_t hints) {
  linear(kernels, x, S, w.view(), y, hints);
}

void linear(KernelsBackend& kernels, std::span<const float> x, int64_t S,
            const glmrt_weight_view& w, std::span<float> y, uint32_t hints) {
  if (static_cast<int64_t>(x.size()) < S * w.cols || static_cast<int64_t>(y.size()) < S * w.rows)
    fail("linear: buffers of {} and {} floats cannot hold [{}x{}] · [{}x{}]ᵀ", x.size(), y.size(),
         S, w.cols, w.rows, w.cols);
  kernels.matmul(x.data(), S, w, y.data(), hints);
}

glmrt_weight_view f32_view(std::span<const float> values, int64_t rows, int64_t cols) {
  if (static_cast<int64_t>(values.size()) < rows * cols)
    fail("f32_view: {} floats cannot hold a {}x{} matrix", values.size(), rows, cols);
  glmrt_weight_view v{};
  v.format.struct_size = sizeof(glmrt_weight_format);
  v.format.element_type = GLMRT_F32;
  v.format.alignment = alignof(float);
  v.data = values.data();
  v.rows = rows;
  v.cols = cols;
  v.row_stride_bytes = cols * static_cast<int64_t>(sizeof(float));
  return v;
}

}  // namespace glmrt
