// Named precision mixes for `glmrt convert --recipe NAME`: a routed-expert
// base format, down_proj a step above it, the first and last MoE layers a
// step above that, the MTP layer at least int8, dense matrices int8. A
// recipe expands into the base formats and --override rules (ahead of the
// user's own) once the model's layers are known.
#pragma once

#include <glmrt/base/weight_precision.h>
#include <glmrt/convert/convert_options.h>
#include <glmrt/model_files/model_config.h>

#include <string>
#include <string_view>
#include <vector>

namespace glmrt {

struct ConvertRecipe {
  std::string_view name;
  std::string_view summary;
  WeightPrecision experts;  // the base of routed experts' gate_proj and up_proj
  int down_steps;           // down_proj this many steps up the ladder
  int edge_steps;           // every matrix of the first and last MoE layers, further up
  WeightPrecision dense;
};

/// Every recipe --recipe takes.
const std::vector<ConvertRecipe>& convert_recipes();
/// The recipe named `name`; throws naming the valid ones.
const ConvertRecipe& find_convert_recipe(std::string_view name);

/// `p` moved `steps` up the quality ladder int2-k16 < int3-k32 < int4-k32 <
/// int8, never past int8 (a precision between two rungs moves from the rung
/// below it; bf16 and f32 stay).
WeightPrecision precision_steps_up(WeightPrecision p, int steps);

/// Sets o.experts and o.dense from `recipe` and puts its rules for `model`'s
/// layers ahead of o.overrides (so the user's own still win).
void apply_convert_recipe(const ConvertRecipe& recipe, const ModelConfig& model, ConvertOptions& o);

}  // namespace glmrt
