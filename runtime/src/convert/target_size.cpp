#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/warning.h>
#include <glmrt/convert/conversion_plan.h>
#include <glmrt/convert/convert_recipe.h>
#include <glmrt/convert/target_size.h>
#include <glmrt/engine/engine.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/text/tokenizer.h>
#include <glmrt/validate/profile_comparison.h>

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

std::vector<WeightPrecision> descending_expert_rungs() {
  return {WeightPrecision(WeightBits::int8), WeightPrecision::two_level_of(WeightBits::int4),
          WeightPrecision::two_level_of(WeightBits::int3),
          WeightPrecision::two_level_of(WeightBits::int2)};
}

// The estimated KL of taking a layer from `steps` to `steps + 1`.
double target_step_cost(const LayerLadder& l, int steps) {
  return std::max(l.sensitivity, 1e-12) * std::pow(4.0, steps);
}

constexpr const char* kTargetExpertClasses[] = {"gate_proj", "up_proj", "down_proj"};

// Each routed-expert class's precision in `layer` as the plan stores it.
std::map<std::string, WeightPrecision> layer_expert_formats(const ConversionPlan& plan, int layer) {
  std::map<std::string, WeightPrecision> formats;
  const std::string prefix = fmt::format("model.layers.{}.mlp.experts.", layer);
  for (const auto& parts : plan.parts)
    for (const ConvertedPart& p : parts) {
      if (p.kind != ConvertedPart::Kind::values || !p.source->name.starts_with(prefix)) continue;
      for (const char* c : kTargetExpertClasses)
        if (p.source->name.ends_with(std::string(".") + c + ".weight"))
          formats.emplace(c, p.precision);
    }
  return formats;
}

std::vector<std::pair<std::string, WeightPrecision>> layer_step_rules(
    int layer, const std::map<std::string, WeightPrecision>& formats, int steps) {
  std::vector<std::pair<std::string, WeightPrecision>> rules;
  for (const auto& [c, p] : formats)
    rules.push_back({fmt::format("model.layers.{}.mlp.experts.*.{}.weight", layer, c),
                     precision_steps_down(p, steps)});
  return rules;
}

std::string layer_formats_text(const std::map<std::string, WeightPrecision>& formats, int steps) {
  std::string s;
  for (const char* c : kTargetExpertClasses) {
    const auto it = formats.find(c);
    if (it == formats.end()) continue;
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", c,
                     precision_name(precision_steps_down(it->second, steps)));
  }
  return s;
}

uint64_t layer_expert_bytes(const ConversionPlan& plan, int layer) {
  const std::string prefix = fmt::format("model.layers.{}.mlp.experts.", layer);
  uint64_t bytes = 0;
  for (size_t f = 0; f < plan.parts.size(); ++f)
    for (size_t k = 0; k < plan.parts[f].size(); ++k)
      if (plan.parts[f][k].source && plan.parts[f][k].source->name.starts_with(prefix))
        bytes += plan.layout.files[f].tensors[k].bytes;
  return bytes;
}

// The plan of `o` over `dir` (which its parts point into: it must outlive
// the plan), the recipe expanded as convert_checkpoint expands it.
ConversionPlan planned_for_target(const TensorDirectory& dir, const ModelConfig& model,
                                  ConvertOptions o) {
  apply_convert_recipe(find_convert_recipe(o.recipe), model, o);
  return plan_conversion(dir, o, model.num_hidden_layers, {128, 128});
}

}  // namespace

WeightPrecision precision_steps_down(WeightPrecision p, int steps) {
  const std::vector<WeightPrecision> rungs = descending_expert_rungs();
  const auto bits = [](WeightPrecision q) { return bits_per_weight(q, 6144); };
  if (steps <= 0) return p;
  // The first rung below p (p itself when it is a rung).
  size_t at = rungs.size() - 1;
  bool on_rung = false;
  for (size_t k = 0; k < rungs.size(); ++k)
    if (bits(rungs[k]) <= bits(p) + 1e-9) {
      at = k;
      on_rung = std::fabs(bits(rungs[k]) - bits(p)) < 1e-9;
      break;
    }
  const size_t moved = at + static_cast<size_t>(steps) - (on_rung ? 0 : 1);
  return rungs[std::min(rungs.size() - 1, moved)];
}

LayerStepChoice choose_layer_steps(uint64_t base_bytes, std::span<const LayerLadder> ladders,
                                   uint64_t target_bytes) {
  LayerStepChoice c;
  c.steps.assign(ladders.size(), 0);
  c.bytes = base_bytes;
  uint64_t smallest = base_bytes;
  for (const LayerLadder& l : ladders)
    if (!l.bytes.empty())
      smallest -= l.bytes.front() - *std::min_element(l.bytes.begin(), l.bytes.end());
  if (smallest > target_bytes)
    fail(
        "--target-gb {:.6g}: cannot be met: with every MoE layer's experts at the recipe "
        "ladder's lowest step the container takes {:.6g} GB",
        target_bytes / 1e9, smallest / 1e9);
  while (c.bytes > target_bytes) {
    size_t best = ladders.size();
    double best_cost = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < ladders.size(); ++i) {
      const LayerLadder& l = ladders[i];
      const auto k = static_cast<size_t>(c.steps[i]);
      if (k + 1 >= l.bytes.size() || l.bytes[k + 1] >= l.bytes[k]) continue;
      const double cost =
          target_step_cost(l, c.steps[i]) / static_cast<double>(l.bytes[k] - l.bytes[k + 1]);
      if (cost < best_cost) {
        best_cost = cost;
        best = i;
      }
    }
    if (best == ladders.size()) fail("--target-gb: no layer can step lower (internal)");
    const LayerLadder& l = ladders[best];
    const auto k = static_cast<size_t>(c.steps[best]);
    c.bytes -= l.bytes[k] - l.bytes[k + 1];
    c.estimated_kl += target_step_cost(l, c.steps[best]);
    ++c.steps[best];
  }
  return c;
}

TargetSizeReport convert_to_target_size(ConvertOptions o, const TargetSizeOptions& t) {
  if (o.recipe.empty()) fail("--target-gb: needs --recipe NAME, whose ladder the layers move on");
  if (!(t.target_gb > 0) || !std::isfinite(t.target_gb))
    fail("--target-gb {}: must be a positive size in GB", t.target_gb);
  if (o.dry_run) fail("--target-gb: measures by converting; it cannot be a --dry-run");
  const auto target = static_cast<uint64_t>(t.target_gb * 1e9);
  const ConvertRecipe& recipe = find_convert_recipe(o.recipe);
  const TensorDirectory dir = TensorDirectory::open(o.from);
  const ModelConfig model = load_model_config(o.from, dir, QuantizationConfig::accepted);
  const ConversionPlan base = planned_for_target(dir, model, o);
  TargetSizeReport report;
  report.recipe_bytes = base.layout.total_bytes();
  std::vector<LayerLadder> ladders;
  std::vector<std::map<std::string, WeightPrecision>> formats;
  for (int l = 0; l < model.num_hidden_layers; ++l) {
    if (model.mlp_kind(l) != MlpKind::sparse) continue;
    auto f = layer_expert_formats(base, l);
    if (f.empty()) continue;
    LayerLadder ladder;
    ladder.layer = l;
    ladder.bytes.push_back(report.recipe_bytes);
    for (int k = 1; k <= static_cast<int>(descending_expert_rungs().size()); ++k) {
      ConvertOptions lower = o;
      const auto rules = layer_step_rules(l, f, k);
      lower.overrides.insert(lower.overrides.end(), rules.begin(), rules.end());
      const uint64_t bytes = planned_for_target(dir, model, lower).layout.total_bytes();
      if (bytes >= ladder.bytes.back()) break;  // every class at the lowest rung
      ladder.bytes.push_back(bytes);
    }
    ladders.push_back(std::move(ladder));
    formats.push_back(std::move(f));
  }
  bool measure = report.recipe_bytes > target;
  if (measure) {
    // Refused before anything is measured when no choice fits.
    choose_layer_steps(report.recipe_bytes, ladders, target);
    Profile profile = t.profile;
    profile.expert_bits = recipe.experts;
    profile.dense_bits = recipe.dense;
    profile.history = false;
    profile.verify_checksums = false;
    const auto ids_wide = text::Tokenizer::from_file(o.from / "tokenizer.json")
                              .encode(read_input_file(t.text, input_kinds::text_to_tokenize), true);
    const std::vector<int32_t> ids(ids_wide.begin(), ids_wide.end());
    if (ids.size() < 2) fail("--sensitivity-text {}: encodes to fewer than 2 tokens", t.text);
    fs::create_directories(t.scratch);
    ConvertOptions trial = o;
    trial.force = true;
    trial.to = t.scratch / "recipe";
    convert_checkpoint(trial);
    auto reference = Engine::open(profile, trial.to);
    for (size_t i = 0; i < ladders.size(); ++i) {
      ConvertOptions lower = o;
      lower.force = true;
      lower.to = t.scratch / "one-layer-lower";
      const auto rules = layer_step_rules(ladders[i].layer, formats[i], 1);
      lower.overrides.insert(lower.overrides.end(), rules.begin(), rules.end());
      convert_checkpoint(lower);
      {
        auto engine = Engine::open(profile, lower.to);
        ladders[i].sensitivity = compare_profiles(*engine, *reference, ids, t.window, 0).mean_kl;
      }
      fs::remove_all(lower.to);
      note("--target-gb: layer {} one step lower ({}): KL {:.3e}", ladders[i].layer,
           layer_formats_text(formats[i], 1), ladders[i].sensitivity);
    }
    reference.reset();
    fs::remove_all(trial.to);
    std::error_code ignored;
    fs::remove(t.scratch, ignored);  // when empty (it held only the trials)
  }
  const LayerStepChoice choice =
      measure ? choose_layer_steps(report.recipe_bytes, ladders, target)
              : LayerStepChoice{std::vector<int>(ladders.size(), 0), report.recipe_bytes, 0.0};
  for (size_t i = 0; i < ladders.size(); ++i) {
    const auto rules = layer_step_rules(ladders[i].layer, formats[i], choice.steps[i]);
    if (choice.steps[i] > 0) o.overrides.insert(o.overrides.end(), rules.begin(), rules.end());
  }
  report.result = convert_checkpoint(o);
  // result.plan's parts point into convert_checkpoint's own directory, gone
  // by now: the layers' sizes come from a plan over `dir`.
  const ConversionPlan chosen = planned_for_target(dir, model, o);
  report.chosen_bytes = chosen.layout.total_bytes();
  for (size_t i = 0; i < ladders.size(); ++i)
    report.layers.push_back({ladders[i].layer, ladders[i].sensitivity, choice.steps[i],
                             layer_formats_text(formats[i], choice.steps[i]),
                             layer_expert_bytes(chosen, ladders[i].layer)});
  return report;
}

}  // namespace glmrt
