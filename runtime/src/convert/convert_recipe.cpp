#include <glmrt/base/error.h>
#include <glmrt/convert/convert_recipe.h>

#include <fmt/format.h>

#include <algorithm>

namespace glmrt {
namespace {

/// Bits per weight of a GLM-5 routed expert row (6144 inputs): orders the
/// ladder's rungs and places precisions between them.
double rung_bits(WeightPrecision p) {
  return bits_per_weight(p, 6144);
}

std::vector<WeightPrecision> ladder() {
  return {WeightPrecision::two_level_of(WeightBits::int2),
          WeightPrecision::two_level_of(WeightBits::int3),
          WeightPrecision::two_level_of(WeightBits::int4), WeightPrecision(WeightBits::int8)};
}

}  // namespace

const std::vector<ConvertRecipe>& convert_recipes() {
  static const std::vector<ConvertRecipe> recipes = {
      {"q4-mix", "experts int4-k32, down_proj int8, first and last MoE layers int8",
       WeightPrecision::two_level_of(WeightBits::int4), 1, 1, WeightBits::int8},
      {"q3-mix",
       "experts int3-k32, down_proj int4-k32, first and last MoE layers int4-k32 (down_proj int8)",
       WeightPrecision::two_level_of(WeightBits::int3), 1, 1, WeightBits::int8},
      {"q2-mix",
       "experts int2-k16, down_proj int3-k32, first and last MoE layers int3-k32 (down_proj "
       "int4-k32)",
       WeightPrecision::two_level_of(WeightBits::int2), 1, 1, WeightBits::int8},
  };
  return recipes;
}

const ConvertRecipe& find_convert_recipe(std::string_view name) {
  std::string valid;
  for (const ConvertRecipe& r : convert_recipes()) {
    if (r.name == name) return r;
    valid += fmt::format("\n  {:<8} {}", r.name, r.summary);
  }
  fail(
      "--recipe {}: no such recipe; the recipes are (each with the MTP layer at least int8 and "
      "dense matrices int8):{}",
      name, valid);
}

WeightPrecision precision_steps_up(WeightPrecision p, int steps) {
  const std::vector<WeightPrecision> rungs = ladder();
  // Routed experts stop at int8: bf16 would double their bytes for little.
  if (steps <= 0 || rung_bits(p) >= rung_bits(rungs.back())) return p;
  // The highest rung at or below p (the lowest when p is below every rung).
  size_t at = 0;
  for (size_t k = 0; k < rungs.size(); ++k)
    if (rung_bits(rungs[k]) <= rung_bits(p) + 1e-9) at = k;
  return rungs[std::min(rungs.size() - 1, at + static_cast<size_t>(steps))];
}

void apply_convert_recipe(const ConvertRecipe& recipe, const ModelConfig& model,
                          ConvertOptions& o) {
  o.experts = recipe.experts;
  o.dense = recipe.dense;
  std::vector<int> moe_layers;
  for (int l = 0; l < model.num_hidden_layers; ++l)
    if (model.mlp_kind(l) == MlpKind::sparse) moe_layers.push_back(l);
  std::vector<std::pair<std::string, WeightPrecision>> rules;
  const WeightPrecision down = precision_steps_up(recipe.experts, recipe.down_steps);
  rules.push_back({"model.layers.*.mlp.experts.*.down_proj.weight", down});
  if (!moe_layers.empty() && recipe.edge_steps > 0) {
    std::vector<int> edges = {moe_layers.front()};
    if (moe_layers.back() != moe_layers.front()) edges.push_back(moe_layers.back());
    for (int l : edges) {
      rules.push_back({fmt::format("model.layers.{}.mlp.experts.*", l),
                       precision_steps_up(recipe.experts, recipe.edge_steps)});
      rules.push_back({fmt::format("model.layers.{}.mlp.experts.*.down_proj.weight", l),
                       precision_steps_up(down, recipe.edge_steps)});
    }
  }
  // The MTP layer drafts every token: at least int8 for its experts (its
  // dense matrices follow o.dense, int8 in every recipe).
  for (int l = model.num_hidden_layers;
       l < model.num_hidden_layers + model.num_nextn_predict_layers; ++l)
    rules.push_back({fmt::format("model.layers.{}.mlp.experts.*", l),
                     rung_bits(recipe.experts) >= rung_bits(WeightBits::int8)
                         ? recipe.experts
                         : WeightPrecision(WeightBits::int8)});
  rules.insert(rules.end(), o.overrides.begin(), o.overrides.end());
  o.overrides = std::move(rules);
}

}  // namespace glmrt
