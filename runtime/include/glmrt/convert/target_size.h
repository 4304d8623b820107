// `glmrt convert --recipe NAME --target-gb G`: each MoE layer's routed
// experts are moved down the recipe's ladder (convert_recipe.h) until the
// container fits G, layers chosen by measured sensitivity: the KL divergence,
// on calibration text, of the recipe's container with one layer's experts a
// step lower against the recipe's container itself. A further step of the
// same layer is estimated at 4x the first (one bit less doubles the rounding
// step: about four times the squared error). Steps go, one at a time, to the
// layer whose next step costs the least estimated KL per byte saved.
#pragma once

#include <glmrt/convert/convert.h>
#include <glmrt/convert/convert_options.h>
#include <glmrt/profile/profile.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace glmrt {

/// One MoE layer's choices: bytes[k] = the container's bytes with this layer
/// k steps lower (bytes[0] the recipe's), and the measured KL of one step.
struct LayerLadder {
  int layer = 0;
  std::vector<uint64_t> bytes;
  double sensitivity = 0;
};

struct LayerStepChoice {
  std::vector<int> steps;  // per ladder, in order
  uint64_t bytes = 0;      // the container's, estimated (layers' savings add up)
  double estimated_kl = 0;
};

/// The steps that bring `base_bytes` to at most `target_bytes`; throws when
/// even every layer at its lowest step does not (naming the smallest size).
LayerStepChoice choose_layer_steps(uint64_t base_bytes, std::span<const LayerLadder> ladders,
                                   uint64_t target_bytes);

/// `p` moved `steps` down the ladder int8 > int4-k32 > int3-k32 > int2-k16,
/// never below int2-k16 (a precision between two rungs moves to the rung
/// below it first).
WeightPrecision precision_steps_down(WeightPrecision p, int steps);

struct TargetSizeOptions {
  double target_gb = 0;           // 1e9 bytes
  std::filesystem::path text;     // calibration text for the sensitivities
  Profile profile;                // plugins; precisions are set from the recipe
  int64_t window = 512;           // tokens per window of the comparison
  std::filesystem::path scratch;  // trial containers (removed after use)
};

struct TargetSizeRow {
  int layer = 0;
  double sensitivity = 0;
  int steps = 0;
  std::string formats;  // "gate/up int3-k32, down int4-k32"
  uint64_t bytes = 0;   // of the layer's expert file
};

struct TargetSizeReport {
  std::vector<TargetSizeRow> layers;
  uint64_t recipe_bytes = 0, chosen_bytes = 0;
  ConvertResult result;
};

/// Measures, chooses and converts `o` (with o.recipe set) into o.to.
TargetSizeReport convert_to_target_size(ConvertOptions o, const TargetSizeOptions& t);

}  // namespace glmrt
