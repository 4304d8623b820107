// What a checkpoint's tensor names say about its layers, checked against
// config.json before anything is allocated per layer: a count the tensors
// contradict would otherwise run a different model (one layer too many runs
// the MTP layer as a decoder layer; one too few leaves a layer unused), and an
// absurd count (1e9) would allocate per-layer state for minutes.
#pragma once

#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <vector>

namespace glmrt {

struct CheckpointLayers {
  /// One more than the highest N of a `model.layers.N.` tensor outside the
  /// MTP layers (0 when there is none).
  int decoder_layers = 0;
  /// N of every layer carrying `model.layers.N.eh_proj.weight` (the marker
  /// of a multi-token-prediction layer), ascending.
  std::vector<int> mtp_layers;

  static CheckpointLayers of(const TensorDirectory& tensors);
  bool has_mtp_layer(int layer) const;
};

/// Throws glmrt::Error, naming config.json, the key and the layers at stake,
/// when `num_hidden_layers` (read into `config`, per-layer kinds not yet)
/// differs from the checkpoint's decoder layers. `num_nextn_predict_layers`
/// > 0 without an MTP layer at index num_hidden_layers is accepted with a
/// note on stderr: converted checkpoints may drop it.
void check_layer_count(const ModelConfig& config, const CheckpointLayers& checkpoint);

}  // namespace glmrt
