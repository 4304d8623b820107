// Synthetic glm_moe_dsa checkpoints: every tensor the layout needs for a given
// config.json, filled with seeded random values scaled so activations and
// logits stay in a useful range (unit-RMS residual stream, logits of a few
// units, router and indexer choices well spread).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "host_tensor.h"

namespace glmrt::test {

struct CheckpointSpec {
  nlohmann::json config;  // config.json as written
  uint64_t seed = 1;
  StoredDType dtype = StoredDType::f32;  // e_score_correction_bias stays F32, as released
  /// The MTP layer carries its own embed_tokens / shared_head.head copies.
  bool mtp_local_embed_and_head = true;
};

/// The tensors of `spec.config` in checkpoint order (values rounded to their
/// dtype). Layer kinds follow mlp_layer_types / first_k_dense_replace and
/// indexer_types / index_topk_pattern; shared-indexer layers get no indexer
/// tensors; one MTP layer at index num_hidden_layers when
/// num_nextn_predict_layers > 0.
TensorList make_checkpoint_tensors(const CheckpointSpec& spec);

/// Writes config.json and the tensors into `dir` (created): shards > 1 gives
/// sharded files plus model.safetensors.index.json, 1 a single model.safetensors.
void write_checkpoint(const std::filesystem::path& dir, const nlohmann::json& config,
                      const TensorList& tensors, int shards);

/// Every tensor of an existing checkpoint directory, as f32 values.
TensorList read_checkpoint_tensors(const std::filesystem::path& dir);

/// A temporary directory removed with everything in it on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace glmrt::test
