// The kernels plugin as the core calls it: single products, and grouped
// products (a step's routed experts, the per-head products of attention) in
// one call the plugin schedules over its threads. A plugin older than ABI
// 1.3 has no grouped call: its products run one matmul() at a time.
#pragma once

#include <glmrt/plugin/kernels.h>
#include <glmrt/weights/matrix.h>

#include <span>
#include <string>
#include <vector>

namespace glmrt {

class KernelsBackend {
 public:
  /// `abi_minor` is the plugin's (its descriptor's); `name` names it in errors.
  KernelsBackend(plugin::Kernels& kernels, int abi_minor, std::string name);

  plugin::Kernels& plugin() const { return kernels_; }
  const std::string& name() const { return name_; }
  /// Whether the plugin runs a grouped call itself (ABI >= 1.3).
  bool has_grouped_matmul() const { return grouped_; }
  /// The plugin's supports(), asked only about formats its ABI minor
  /// defines: ggml blocks (1.5) are refused for an older plugin unasked.
  bool supports(const glmrt_weight_format& format) const {
    if (plugin::is_ggml_blocks(format.element_type) && !ggml_types_) return false;
    return kernels_.supports(format);
  }

  /// y = x · Wᵀ (x [S, I], y [S, O], rows packed); throws glmrt::Error naming
  /// the plugin and the shapes when the plugin fails. `hints` (GLMRT_PRODUCT_*
  /// bits) reach a plugin of ABI >= 1.8 through matmul_hinted().
  void matmul(const float* x, int64_t S, const glmrt_weight_view& w, float* y, uint32_t hints = 0);
  /// Every product of the list; each y is what matmul() would give it alone.
  void grouped_matmul(std::span<const glmrt_matmul_product> products);

  /// The layout the plugin offers for rows of `format` with `cols` inputs
  /// (ABI >= 1.7; packing 0: none, always for an older plugin).
  glmrt_row_packing row_packing(const glmrt_weight_format& format, int64_t cols) const;
  /// Packs `m`'s rows in place into row_packing()'s layout and marks it so
  /// (Matrix::set_packing); false, changing nothing, when none is offered.
  /// Throws glmrt::Error naming the plugin when packing fails.
  bool pack(Matrix& m) const;

 private:
  plugin::Kernels& kernels_;
  bool grouped_;
  bool ggml_types_;   // ABI >= 1.5
  bool row_packing_;  // ABI >= 1.7
  bool hints_;        // ABI >= 1.8
  std::string name_;
};

/// One product of a grouped call: y[s] = x[s] · Wᵀ for s < S, rows of x and y
/// `x_stride` and `y_stride` floats apart (0: packed).
glmrt_matmul_product matmul_product(const float* x, int64_t S, int64_t x_stride,
                                    const glmrt_weight_view& w, float* y, int64_t y_stride);

}  // namespace glmrt
