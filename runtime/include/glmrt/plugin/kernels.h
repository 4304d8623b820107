// Kernels plugins: the matrix products every linear layer and expert runs.
#pragma once

#include <glmrt/plugin/abi.h>
#include <glmrt/plugin/host_services.h>
#include <glmrt/plugin/weight_format.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One product of a grouped call (ABI 1.3): y[S, O] = x[S, I] · Wᵀ with its
/// own weights, format and rows. Row s of x starts at x + s * x_stride and
/// row s of y at y + s * y_stride (floats; 0 means I and O, rows packed), so
/// a head's slice of a wider row is used where it is, without a copy.
typedef struct glmrt_matmul_product {
  uint32_t struct_size;  // sizeof(glmrt_matmul_product) as the host saw it
  const float* x;
  int64_t S;
  int64_t x_stride;
  glmrt_weight_view w;
  float* y;
  int64_t y_stride;
} glmrt_matmul_product;

/// ABI 1.7: a layout a kernels plugin offers for a matrix's rows (see
/// Kernels::row_packing). `packing` 0 means none is offered.
typedef struct glmrt_row_packing {
  uint32_t struct_size;  // sizeof(glmrt_row_packing) as the plugin saw it
  /// The glmrt_weight_format::packing value packed rows carry (nonzero).
  uint32_t packing;
  /// Rows rearranged together: rows [k * group_rows, (k + 1) * group_rows)
  /// are permuted among themselves, within the bytes they took before; the
  /// rows after the last whole group stay as they were. A view of packed
  /// rows starts at a multiple of group_rows and ends at one or at the
  /// matrix's last row.
  uint32_t group_rows;
} glmrt_row_packing;

/// ABI 1.8: hints of Kernels::matmul_hinted, bits of its `hints`.
/// y are the step's output logits: only sampling reads them, no routing or
/// selection and no other product of the step. Results may differ from
/// matmul()'s by the plugin's fastest activation rounding (never by more
/// than its conformance tolerance).
#define GLMRT_PRODUCT_LOGITS 1u

#ifdef __cplusplus
}  // extern "C"

namespace glmrt::plugin {

/// Created by a GLMRT_PLUGIN_KERNELS plugin's create(). Thread-compatible:
/// the host calls it from one thread at a time. It parallelises inside over
/// at most host.n_threads threads, with the host's parallel_for, or with
/// OpenMP parallel regions of at most n_threads threads when the plugin
/// links the host's libgomp (the in-tree plugins do; a plugin built with
/// another OpenMP runtime must use parallel_for, so no second thread pool
/// competes with the host's). It starts no threads of its own.
class Kernels {
 public:
  /// True when matmul() accepts this weight format. The host asks before it
  /// reads any tensor, for every format the profile will use, and refuses a
  /// plugin that says no (`kernels: auto` passes over it).
  virtual bool supports(const glmrt_weight_format& format) const noexcept = 0;

  /// y[S, O] = x[S, I] · Wᵀ. x is row-major with row stride I floats, y with row
  /// stride O floats. Each weight row is read once for all S rows.
  virtual glmrt_status matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                              float* y) noexcept = 0;

  /// Text of the most recent error of this object.
  virtual const char* last_error() const noexcept = 0;

  /// Releases the object (the plugin frees what it allocated).
  virtual void destroy() noexcept = 0;

  /// ABI 1.3: every product of the list, as one call the plugin schedules
  /// over its threads (a step's routed experts, the per-head products of
  /// attention: many small products no single one of which fills the
  /// threads). Each product's y is exactly what matmul() gives it alone, bit
  /// for bit; outputs do not overlap, inputs may. The host calls this only
  /// when the plugin's abi_minor >= 3. This default runs the products one
  /// after another; a plugin overrides it to run them side by side.
  virtual glmrt_status grouped_matmul(const glmrt_matmul_product* products, size_t n) noexcept;

  /// ABI 1.7: the layout this object would pack rows of `format` with
  /// `cols` inputs into for faster products, or packing 0. A packing keeps
  /// the element type, the row stride and every byte count; it only
  /// reorders bytes within groups of rows (glmrt_row_packing). The host
  /// asks about resident matrices at load, calls pack_rows() on the ones it
  /// packs, and from then on passes their views with the packing set; it
  /// never dequantizes packed rows itself. Default: nothing is offered.
  virtual glmrt_row_packing row_packing(const glmrt_weight_format& format,
                                        int64_t cols) const noexcept;

  /// ABI 1.7: rewrites in place, into the layout row_packing() offered,
  /// `rows` rows of `format` (packing 0) with `cols` inputs starting at
  /// `data`, `row_stride_bytes` apart. Products of the packed rows give
  /// exactly what the unpacked ones gave, bit for bit.
  virtual glmrt_status pack_rows(const glmrt_weight_format& format, void* data, int64_t rows,
                                 int64_t cols, int64_t row_stride_bytes) noexcept;

  /// ABI 1.8: matmul() with hints about the product (GLMRT_PRODUCT_* bits;
  /// unknown bits are ignored). The default ignores every hint.
  virtual glmrt_status matmul_hinted(const float* x, int64_t S, const glmrt_weight_view& w,
                                     float* y, uint32_t hints) noexcept;

 protected:
  ~Kernels() = default;  // never deleted through the interface
};

inline glmrt_status Kernels::grouped_matmul(const glmrt_matmul_product* products,
                                            size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) {
    const glmrt_matmul_product& p = products[i];
    const int64_t I = p.w.cols, O = p.w.rows;
    const bool packed =
        (p.x_stride == 0 || p.x_stride == I) && (p.y_stride == 0 || p.y_stride == O);
    if (packed) {
      if (const glmrt_status s = matmul(p.x, p.S, p.w, p.y); s != GLMRT_OK) return s;
      continue;
    }
    // Strided rows go one at a time: matmul() reads packed rows.
    for (int64_t s = 0; s < p.S; ++s)
      if (const glmrt_status st = matmul(p.x + s * (p.x_stride ? p.x_stride : I), 1, p.w,
                                         p.y + s * (p.y_stride ? p.y_stride : O));
          st != GLMRT_OK)
        return st;
  }
  return GLMRT_OK;
}

inline glmrt_row_packing Kernels::row_packing(const glmrt_weight_format&, int64_t) const noexcept {
  return glmrt_row_packing{sizeof(glmrt_row_packing), 0, 1};
}

inline glmrt_status Kernels::pack_rows(const glmrt_weight_format&, void*, int64_t, int64_t,
                                       int64_t) noexcept {
  return GLMRT_ERR_UNSUPPORTED;
}

inline glmrt_status Kernels::matmul_hinted(const float* x, int64_t S, const glmrt_weight_view& w,
                                           float* y, uint32_t) noexcept {
  return matmul(x, S, w, y);
}

}  // namespace glmrt::plugin
#endif
