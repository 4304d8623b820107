// Which experts a coming MoE layer will want, guessed before it runs: its
// router applied to the hidden state as it stands now (the residual stream
// changes little from one layer to the next). The guess only decides what is
// read ahead; the layer routes again on its own input when it runs.
#pragma once

#include <glmrt/model/model_weights.h>
#include <glmrt/model/moe_scratch.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/plugin/kernels.h>
#include <glmrt/weights/kernels_backend.h>

#include <span>
#include <vector>

namespace glmrt {

/// The experts `next`'s router chooses for hidden states h [S, hidden]
/// normed with `next`'s post-attention norm, most chosen first (ties: the
/// better-ranked choice first), at most `limit` of them, into m.predicted.
/// `h` may be m.predict_normed itself (normalised in place).
void predict_experts(const LayerWeights& next, const ModelConfig& config, KernelsBackend& kernels,
                     std::span<const float> h, int64_t S, size_t limit, MoeScratch& m);

}  // namespace glmrt
