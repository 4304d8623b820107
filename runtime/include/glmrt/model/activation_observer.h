// Sees the input rows of the model's matrix products as the forward pass
// computes them (`glmrt calibrate` collects activation statistics with it).
// Mirrors RoutingObserver: the model calls it only when one is set, so an
// unset observer costs one pointer test per product.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace glmrt {

/// Which weight a product multiplies, by its Hugging Face name's parts.
struct MatmulSite {
  int layer = -1;           // decoder layer (the MTP layer is num_hidden_layers); -1: none
  int expert = -1;          // routed expert id, -1 for the rest
  std::string_view module;  // "self_attn", "mlp.shared_experts", ... (empty for lm_head)
  std::string_view weight;  // "q_a_proj.weight", "gate_proj.weight", ...
};

/// The weight's checkpoint name: "model.layers.3.self_attn.q_a_proj.weight",
/// "model.layers.3.mlp.experts.17.down_proj.weight", "lm_head.weight".
std::string matmul_weight_name(const MatmulSite& site);

class ActivationObserver {
 public:
  virtual ~ActivationObserver() = default;
  /// `rows` holds `n` input rows of the product (row-major, the weight's
  /// column count each). Routed experts run side by side: calls may come
  /// from several threads at once.
  virtual void on_matmul_input(const MatmulSite& site, std::span<const float> rows, int64_t n) = 0;
};

/// Shows `rows` to `observer` when there is one.
inline void observe_input(ActivationObserver* observer, const MatmulSite& site,
                          std::span<const float> rows, int64_t n) {
  if (observer) observer->on_matmul_input(site, rows, n);
}

}  // namespace glmrt
