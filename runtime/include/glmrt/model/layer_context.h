// What one decoder layer's computation works with: the model's parts, the
// same for every call (ModelContext), and the call's own (LayerCall).
#pragma once

#include <glmrt/experts/expert_store.h>
#include <glmrt/kv/kv_cache.h>
#include <glmrt/model/activation_observer.h>
#include <glmrt/model/cache_bias_routing.h>
#include <glmrt/model/forward_trace.h>
#include <glmrt/model/mla_core.h>
#include <glmrt/model/moe_scratch.h>
#include <glmrt/model/rope.h>
#include <glmrt/model/routing_observer.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/weights/kernels_backend.h>

#include <cstdint>
#include <vector>

namespace glmrt {

class RemoteExperts;

/// Keys each new position may attend to, chosen by the DSA indexer. An empty
/// row means every visible key (the sequence is still within index_topk).
struct KeySelection {
  std::vector<std::vector<int32_t>> rows;  // [S]
  bool empty() const { return rows.empty(); }
};

/// What every layer of one model works with, the same for every call: set
/// up once by Model, which owns the scratch and the times.
struct ModelContext {
  const ModelConfig& config;
  KernelsBackend& kernels;
  const Rope& rope;
  ExpertStore& experts;
  MoeScratch& moe_scratch;        // every MoE block's and prediction's buffers, reused
  LatentScratch& latent_scratch;  // every absorbed attention's buffers, reused
  StepTimes& times;               // where forward steps spend their time
  CacheBiasRouting& cache_bias;   // routing.cache_bias, and what it substituted
  AttentionFormChoice attention_form = AttentionFormChoice::automatic;
  ForwardTrace* trace = nullptr;              // records selections and routing when set
  RoutingObserver* routing = nullptr;         // sees every MoE step's choices when set
  ActivationObserver* activations = nullptr;  // sees every product's input rows when set
  RemoteExperts* remote = nullptr;            // runs the experts other processes own when set
};

/// One sequence's rows in a step over several (Model::forward_batch): its
/// cache, where its rows start in the step's stacked [rows, hidden] arrays
/// and how many, and its DSA selection, carried from layer to layer.
struct SequenceRows {
  KvCache& cache;
  int64_t first = 0, count = 0;
  KeySelection selection = {};
};

/// One layer of one forward call: the model's parts, the sequence's cache,
/// and the layer (its cache and expert-store row; the MTP layer is
/// num_hidden_layers).
struct LayerCall {
  const ModelContext& model;
  KvCache& cache;
  int layer;

  /// Shows this layer's input rows of `module`.`weight` to the observer.
  void observe(std::string_view module, std::string_view weight, std::span<const float> rows,
               int64_t n) const {
    if (model.activations) model.activations->on_matmul_input({layer, -1, module, weight}, rows, n);
  }
};

}  // namespace glmrt
