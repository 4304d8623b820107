// The model's guesses of the experts coming layers will want, handed to the
// expert store to read ahead (expert_prediction.h applies a layer's router to
// the residual stream as far as it is known).
#include <glmrt/base/elapsed_time.h>
#include <glmrt/model/expert_prediction.h>
#include <glmrt/model/model.h>
#include <glmrt/model/remote_experts.h>

#include <chrono>
#include <span>
#include <vector>

namespace glmrt {
namespace {

/// The residual stream as far as a layer has computed it, into `sum`: its
/// input `h` plus the shared expert's and the routed experts' outputs so far
/// (either may be empty), plus `per_row` added to each row when given.
std::span<const float> residual_so_far(std::span<const float> h, std::span<const float> shared,
                                       std::span<const float> routed,
                                       std::span<const float> per_row, std::vector<float>& sum) {
  if (sum.size() < h.size()) sum.resize(h.size());
  const size_t D = per_row.size();
  for (size_t i = 0; i < h.size(); ++i)
    sum[i] = h[i] + (shared.empty() ? 0.f : shared[i]) + (routed.empty() ? 0.f : routed[i]) +
             (D ? per_row[i % D] : 0.f);
  return {sum.data(), h.size()};
}

}  // namespace

void Model::find_moe_layers() {
  for (int i = 0; i < config_.num_hidden_layers; ++i) {
    if (weights_.layers[static_cast<size_t>(i)].mlp_kind != MlpKind::sparse) continue;
    if (first_moe_layer_ < 0) first_moe_layer_ = i;
    last_moe_layer_ = i;
  }
}

size_t Model::prediction_limit(int64_t S) const {
  // One position's choices; for a longer step, as many as the pool holds.
  return S == 1 ? static_cast<size_t>(config_.num_experts_per_tok)
                : static_cast<size_t>(experts_.pool_capacity());
}

void Model::prefetch_next_layer(int layer, std::span<const float> h, int64_t S,
                                std::span<const float> shared, std::span<const float> routed_so_far,
                                bool whole_layer) {
  // Predicted even when nothing is read ahead (memory.prefetch 0, every
  // expert pinned): the accuracy is measured, and auto depth needs it. One
  // norm and one router product per layer: cheap beside the layer.
  const int next = layer + 1;
  if (next >= config_.num_hidden_layers) return;
  const LayerWeights& w = weights_.layers[next];
  if (w.mlp_kind != MlpKind::sparse) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::span<const float> basis = h.first(static_cast<size_t>(S * config_.hidden_size));
  // The residual stream as the next layer's router will see it, as far as it
  // is known: attention output, the shared expert and the routed experts that
  // were in memory (they ran before this was called), plus the next layer's
  // attention as the last call's last position saw it (consecutive tokens'
  // attention outputs at a layer are alike). On the demo model they predict
  // 76.7% (attention output alone), 77.7% (+ routed so far) and 82.4% (+ the
  // next layer's last attention) of the experts (docs/expert-cache.md); the
  // shared expert changes nothing there, colibri measured +2 to +5 points
  // with it on GLM-5.2. Summed into the prediction's own normed rows,
  // normalised in place there (no buffer beyond the ones the plan counts).
  // After a dense layer's attention (no MLP output yet) only the attention
  // output is used: without the MLP's output, adding the next layer's
  // attention made the demo's predictions worse (75.6% against 82.4%).
  // With `whole_layer` the layer's whole MLP output is in h (the guess made
  // while its experts were read is refined once they have all run).
  if (whole_layer || !shared.empty() || !routed_so_far.empty()) {
    const int64_t D = config_.hidden_size;
    const std::span<const float> next_attention(last_attention_.data() + next * D,
                                                static_cast<size_t>(D));
    basis = residual_so_far(basis, shared, routed_so_far, next_attention, scratch_.predict_normed);
  }
  predict_experts(w, config_, kernels_, basis, S, prediction_limit(S), scratch_);
  if (context_.remote) {
    // After a dense layer: the ranks that own the predicted experts read
    // them ahead (no exchange follows to carry the prediction), this one
    // its own share.
    context_.remote->prefetch(next, scratch_.predicted);
    prefetch_own_share(next, scratch_.predicted);
  } else {
    experts_.prefetch(next, scratch_.predicted);
  }
  times_.predict += seconds_since(t0);
}

bool Model::prefetch_next_step(std::span<const float> h, int64_t S, std::span<const float> shared,
                               std::span<const float> routed_so_far) {
  if (first_moe_layer_ < 0 || experts_.sizes().prefetch <= 0) return false;
  const auto t0 = std::chrono::steady_clock::now();
  // The next token is not sampled yet; this step's last MoE layer's state
  // (attention, shared expert, routed experts so far) stands in for its
  // residual stream at the first MoE layer. A rough guess, but the drive
  // would otherwise idle through the rest of this step, the lm_head and the
  // next step's dense layers; a later prefetch_next_layer refines it.
  const std::span<const float> state =
      residual_so_far(h.first(static_cast<size_t>(S * config_.hidden_size)), shared, routed_so_far,
                      {}, scratch_.predict_normed);
  predict_experts(weights_.layers[static_cast<size_t>(first_moe_layer_)], config_, kernels_, state,
                  S, prediction_limit(S), scratch_);
  const bool submitted = experts_.prefetch_next_step(first_moe_layer_, scratch_.predicted);
  times_.predict += seconds_since(t0);
  return submitted;
}

int Model::predict_next_layer(int layer, std::span<const float> h, int64_t S) {
  const int next = layer + 1;
  if (experts_.sizes().prefetch <= 0 || next >= config_.num_hidden_layers) return -1;
  const LayerWeights& w = weights_.layers[next];
  if (w.mlp_kind != MlpKind::sparse) return -1;
  const auto t0 = std::chrono::steady_clock::now();
  predict_experts(w, config_, kernels_, h, S, prediction_limit(S), scratch_);
  times_.predict += seconds_since(t0);
  return next;
}

void Model::prefetch_own_share(int next, std::span<const int32_t> predicted) {
  std::vector<int32_t> own;
  for (int32_t id : predicted)
    if (context_.remote->runs_here(next, id)) own.push_back(id);
  if (!own.empty()) experts_.prefetch(next, own);
}

}  // namespace glmrt
