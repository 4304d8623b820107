#include <glmrt/base/error.h>
#include <glmrt/weights/kernels_backend.h>

namespace glmrt {
namespace {

std::string shape(const glmrt_matmul_product& p) {
  return fmt::format("[{}x{}] · [{}x{}]ᵀ (element type {})", p.S, p.w.cols, p.w.rows, p.w.cols,
                     p.w.format.element_type);
}

}  // namespace

KernelsBackend::KernelsBackend(plugin::Kernels& kernels, int abi_minor, std::string name)
    : kernels_(kernels),
      grouped_(abi_minor >= GLMRT_ABI_MINOR_GROUPED_MATMUL),
      ggml_types_(abi_minor >= GLMRT_ABI_MINOR_GGML_TYPES),
      row_packing_(abi_minor >= GLMRT_ABI_MINOR_ROW_PACKING),
      hints_(abi_minor >= GLMRT_ABI_MINOR_PRODUCT_HINTS),
      name_(std::move(name)) {}

void KernelsBackend::matmul(const float* x, int64_t S, const glmrt_weight_view& w, float* y,
                            uint32_t hints) {
  if (S == 0 || w.rows == 0) return;
  const glmrt_status status =
      hints && hints_ ? kernels_.matmul_hinted(x, S, w, y, hints) : kernels_.matmul(x, S, w, y);
  if (status != GLMRT_OK)
    fail("kernels plugin `{}` failed on a [{}x{}] · [{}x{}]ᵀ product (element type {}): {}", name_,
         S, w.cols, w.rows, w.cols, w.format.element_type, kernels_.last_error());
}

void KernelsBackend::grouped_matmul(std::span<const glmrt_matmul_product> products) {
  if (products.empty()) return;
  if (grouped_) {
    if (kernels_.grouped_matmul(products.data(), products.size()) != GLMRT_OK)
      fail("kernels plugin `{}` failed on a grouped call of {} products (the first {}): {}", name_,
           products.size(), shape(products.front()), kernels_.last_error());
    return;
  }
  // ABI <= 1.2: one product at a time, a strided one row at a time.
  for (const glmrt_matmul_product& p : products) {
    const int64_t I = p.w.cols, O = p.w.rows;
    if ((p.x_stride == 0 || p.x_stride == I) && (p.y_stride == 0 || p.y_stride == O)) {
      matmul(p.x, p.S, p.w, p.y);
      continue;
    }
    for (int64_t s = 0; s < p.S; ++s)
      matmul(p.x + s * (p.x_stride ? p.x_stride : I), 1, p.w,
             p.y + s * (p.y_stride ? p.y_stride : O));
  }
}

glmrt_row_packing KernelsBackend::row_packing(const glmrt_weight_format& format,
                                              int64_t cols) const {
  glmrt_row_packing none{sizeof(glmrt_row_packing), 0, 1};
  if (!row_packing_ || !supports(format)) return none;
  const glmrt_row_packing offer = kernels_.row_packing(format, cols);
  // A group of 0 rows, or a packing the plugin would not take back, is no offer.
  if (offer.struct_size < sizeof(glmrt_row_packing) || offer.packing == 0 || offer.group_rows == 0)
    return none;
  glmrt_weight_format packed = format;
  packed.packing = offer.packing;
  return kernels_.supports(packed) ? offer : none;
}

bool KernelsBackend::pack(Matrix& m) const {
  if (m.empty() || m.packing() != 0) return false;
  const glmrt_weight_view v = m.view();
  const glmrt_row_packing offer = row_packing(v.format, v.cols);
  if (offer.packing == 0) return false;
  if (kernels_.pack_rows(v.format, m.storage().data, v.rows, v.cols, v.row_stride_bytes) !=
      GLMRT_OK)
    fail("kernels plugin `{}` failed to pack a [{}x{}] matrix (element type {}): {}", name_, v.rows,
         v.cols, v.format.element_type, kernels_.last_error());
  m.set_packing(offer.packing, offer.group_rows);
  return true;
}

glmrt_matmul_product matmul_product(const float* x, int64_t S, int64_t x_stride,
                                    const glmrt_weight_view& w, float* y, int64_t y_stride) {
  glmrt_matmul_product p{};
  p.struct_size = sizeof(p);
  p.x = x;
  p.S = S;
  p.x_stride = x_stride;
  p.w = w;
  p.y = y;
  p.y_stride = y_stride;
  return p;
}

}  // namespace glmrt
