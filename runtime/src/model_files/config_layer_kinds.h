// Per-layer kinds of a glm_moe_dsa config: dense or sparse MLP, full or
// shared DSA indexer, from whichever keys the config spells them with.
#pragma once

#include <vector>

#include "config_fields.h"
#include <glmrt/model_files/model_config.h>

namespace glmrt::model_files {

/// `mlp_layer_types` when present; else DeepSeek style: layer i is sparse when
/// i >= first_k_dense_replace and i % moe_layer_freq == 0.
std::vector<MlpKind> read_mlp_layer_types(const ConfigFields& fields, int num_layers);

/// `indexer_types` when present; else `index_topk_pattern` (F = full,
/// S = shared, one letter per layer); else layer i is full when
/// max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0. A shared
/// layer reuses the previous layer's selection, so layer 0 must be full.
std::vector<IndexerKind> read_indexer_types(const ConfigFields& fields, int num_layers);

}  // namespace glmrt::model_files
