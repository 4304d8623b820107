// The MLP halves of a decoder layer: the dense SwiGLU MLP, and the MoE block
// (router -> routed experts from the store + the shared expert).
#pragma once

#include <glmrt/model/layer_context.h>
#include <glmrt/model/model_weights.h>

#include <cstdint>
#include <functional>
#include <span>

namespace glmrt {

/// out[S, hidden] = down(silu(gate(x)) * up(x)). With `observed`, its
/// activation observer sees the products' inputs as `module`.{gate,up,down}_proj.
void swiglu_mlp(const Matrix& gate, const Matrix& up, const Matrix& down, KernelsBackend& kernels,
                std::span<const float> x, int64_t S, std::span<float> out,
                const LayerCall* observed = nullptr, std::string_view module = {});
inline void swiglu_mlp(const FeedForwardWeights& w, KernelsBackend& kernels,
                       std::span<const float> x, int64_t S, std::span<float> out,
                       const LayerCall* observed = nullptr, std::string_view module = {}) {
  swiglu_mlp(w.gate, w.up, w.down, kernels, x, S, out, observed, module);
}

/// The experts a later MoE layer is predicted to use, sent along with a
/// step's exchange when other processes run experts (layer -1: none).
struct NextLayerPrediction {
  int layer = -1;
  std::span<const int32_t> experts;
};

/// Routes every position and runs each distinct expert once for all the
/// positions that chose it, as the store hands it over (present experts
/// first, the rest as their reads land), then adds the shared expert. Each
/// position sums its experts in ascending id order whatever order they
/// arrived in, so results never depend on the cache, prefetch or pool size.
/// The shared expert runs while this layer's reads are in flight; then
/// `reads_queued` gets its output [S, hidden] and the routed experts' sum so
/// far (those in memory have run; empty when none ran here) — the next
/// layer's prediction and prefetch go there. x: normed hidden [S, hidden]. With remote experts
/// set on the model (ModelContext::remote), the experts other processes own
/// run there, `next` travelling with the step.
using SharedExpertReady =
    std::function<void(std::span<const float> shared, std::span<const float> routed_so_far)>;
void moe_block(const MoeWeights& w, const LayerCall& ctx, std::span<const float> x, int64_t S,
               std::span<float> out, const SharedExpertReady& reads_queued = {},
               const NextLayerPrediction& next = {});

}  // namespace glmrt
