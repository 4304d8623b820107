// The MLP halves of a decoder layer: the dense SwiGLU MLP, and the MoE block
// (router -> routed experts from the store + the shared expert).
#pragma once

#include <glmrt/model/layer_context.h>
#include <glmrt/model/model_weights.h>

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

/// Routes every position and runs each distinct expert once for all the
/// positions that chose it, as the store hands it over (present experts
/// first, the rest as their reads land), then adds the shared expert. Each
/// position sums its experts in ascending id order whatever order they
/// arrived in, so results never depend on the cache, prefetch or pool size.
/// `reads_queued` runs once this layer's reads are submitted (the next
/// layer's prefetch goes there). x: normed hidden [S, hidden].
void moe_block(const MoeWeights& w, const LayerCall& ctx, std::span<const float> x, int64_t S,
               std::span<float> out, const std::function<void()>& reads_queued = {});

}  // namespace glmrt
