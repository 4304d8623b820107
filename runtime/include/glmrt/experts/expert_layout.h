// Where one routed expert's bytes live on disk: its three matrices (and their
// scales when pre-quantized), coalesced into as few extents as possible. The
// store thinks in these extents. In the seed program's layout (an expert's
// three matrices adjacent, a layer's scales together elsewhere) an expert is
// two extents; in glmrt's (each expert's matrices and scales contiguous,
// 4096-aligned; small gaps between them are read through) it is one.
#pragma once

#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <array>
#include <cstdint>
#include <vector>

namespace glmrt {

struct ExpertTensorPlace {
  const TensorInfo* values = nullptr;  // gate/up/down weight
  const TensorInfo* scales = nullptr;  // `<name>.qs` / `.gqs` when pre-quantized
  int packed_type = -1;                // glmrt_element_type of pre-quantized values
  uint32_t group_size = 0;             // of per-group scales (`<name>.gqs`); 0 = per row
  int64_t rows = 0, cols = 0;
};

struct ExpertExtent {
  int file = 0;
  uint64_t offset = 0, length = 0;
};

struct ExpertLayout {
  std::array<ExpertTensorPlace, 3> tensors;  // gate, up, down
  std::vector<ExpertExtent> extents;         // sorted by (file, offset), coalesced
  uint64_t bytes = 0;                        // sum of extent lengths (bridged gaps included)
};

/// Checks presence, dtype and shape of every routed expert of every MoE layer
/// (main and MTP) and computes their layouts; errors name the tensor and file.
/// Index: [layer][expert]; empty for dense layers.
std::vector<std::vector<ExpertLayout>> plan_expert_layouts(const ModelConfig& config,
                                                           const TensorDirectory& tensors,
                                                           int n_layers_with_mtp);

}  // namespace glmrt
