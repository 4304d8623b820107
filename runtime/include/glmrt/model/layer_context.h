// What one decoder layer's computation borrows from the model for a step of S
// new positions.
#pragma once

#include <glmrt/experts/expert_store.h>
#include <glmrt/history/routing_observer.h>
#include <glmrt/kv/kv_cache.h>
#include <glmrt/model/activation_observer.h>
#include <glmrt/model/forward_trace.h>
#include <glmrt/model/mla_core.h>
#include <glmrt/model/moe_scratch.h>
#include <glmrt/model/rope.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/weights/kernels_backend.h>

#include <cstdint>
#include <vector>

namespace glmrt {

/// Keys each new position may attend to, chosen by the DSA indexer. An empty
/// row means every visible key (the sequence is still within index_topk).
struct KeySelection {
  std::vector<std::vector<int32_t>> rows;  // [S]
  bool empty() const { return rows.empty(); }
};

struct LayerContext {
  const ModelConfig& config;
  KernelsBackend& kernels;
  const Rope& rope;
  KvCache& cache;
  ExpertStore& experts;
  int layer;  // cache and expert-store row (the MTP layer is num_hidden_layers)
  AttentionFormChoice attention_form = AttentionFormChoice::automatic;
  ForwardTrace* trace = nullptr;              // records selections and routing when set
  MoeScratch* moe_scratch = nullptr;          // reused buffers (a fresh set per call when null)
  StepTimes* times = nullptr;                 // where the time goes, when set
  LatentScratch* latent_scratch = nullptr;    // absorbed attention's buffers (fresh when null)
  RoutingObserver* routing = nullptr;         // sees every MoE step's choices when set
  ActivationObserver* activations = nullptr;  // sees every product's input rows when set

  /// Shows this layer's input rows of `module`.`weight` to the observer.
  void observe(std::string_view module, std::string_view weight, std::span<const float> rows,
               int64_t n) const {
    if (activations) activations->on_matmul_input({layer, -1, module, weight}, rows, n);
  }
};

}  // namespace glmrt
