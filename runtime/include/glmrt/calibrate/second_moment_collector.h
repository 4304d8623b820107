// Accumulates the second-moment matrices H = sum over calibration rows of
// x x^T that error-compensating rounding (weights/gptq_quantizer.h) needs,
// one per distinct input of the model's products: matrices that read the
// same rows share one (second_moment_key), so a layer's q_a, kv_a and
// indexer wk/weights_proj share the input_layernorm output's, and its dense
// MLP and shared experts share the post_attention_layernorm output's (taken
// from the dense MLP or the shared experts, which see every token). A routed
// expert's gate and up share one of their own and its down_proj has its own,
// each over the tokens routed to it; gate and up also name the layer's
// shared one as their fallback, for an expert too few tokens reached (or
// whose own did not fit the budget). Accumulators are f32 [cols, cols]; products
// wider than `max_cols` get none (their diagonal statistics still apply).
// Memory is bounded by `budget_bytes`: keys of layers from `first_order` on
// are taken in layer order until the next would pass the budget; that layer
// and the later ones are left for the next pass (calibrate.h).
#pragma once

#include <glmrt/model/activation_observer.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace glmrt {

/// The shared statistic a product's input belongs to.
struct SecondMomentKey {
  std::string name;    // "model.layers.3.post_attention_layernorm", or the weight's own name
  bool source = true;  // this product's rows are the ones accumulated for `name`
  int layer = -1;      // decoder layer, -1 for lm_head
  /// A routed expert's own moments, by the order a layer too large for the
  /// budget leaves them out: 1 its gate/up (which have a fallback), 2 its
  /// down_proj; 0 not a routed expert's.
  int routed_level = 0;
  std::string fallback;  // the shared key a routed gate/up falls back on, else empty
};
SecondMomentKey second_moment_key(const MatmulSite& site);

struct SecondMoment {
  int64_t cols = 0, rows = 0;
  std::vector<float> sums;  // [cols, cols], symmetric
};

class SecondMomentCollector : public ActivationObserver {
 public:
  /// Layers in the order `order` gives (a pass covers orders [first_order,
  /// frontier)); routed experts' own moments of routed_level at most
  /// `left_out[order]` are skipped in that layer.
  SecondMomentCollector(int64_t max_cols, uint64_t budget_bytes, int first_order, int lm_head_order,
                        std::map<int, int> left_out);
  void on_matmul_input(const MatmulSite& site, std::span<const float> rows, int64_t n) override;

  /// The first order the pass did not cover (lm_head_order + 1 when it
  /// covered every layer).
  int frontier() const;
  /// The pass's matrices by key (mirrored to full), emptied.
  std::map<std::string, SecondMoment> take();
  /// Every weight seen with the key its input belongs to.
  std::map<std::string, std::string> weight_keys() const;
  /// Routed experts' gate/up weights with the layer's shared key.
  std::map<std::string, std::string> weight_fallbacks() const;

 private:
  int order_of(int layer) const { return layer < 0 ? lm_head_order_ : layer; }
  struct Accumulator {
    SecondMoment moment;
    int order = 0;
  };
  int64_t max_cols_;
  uint64_t budget_, used_ = 0;
  int first_order_, lm_head_order_, frontier_;
  std::map<int, int> left_out_;
  mutable std::mutex mutex_;  // routed experts run side by side
  std::map<std::string, std::unique_ptr<Accumulator>> sums_;
  std::map<std::string, std::string> weight_keys_;
  std::map<std::string, std::string> weight_fallbacks_;
};

}  // namespace glmrt
