// glmrt convert: a Hugging Face checkpoint into a quantized streaming
// container (docs/convert.md).
#include "commands.h"
#include "options.h"

#include <glmrt/base/error.h>
#include <glmrt/convert/convert.h>
#include <glmrt/convert/convert_recipe.h>
#include <glmrt/convert/target_size.h>
#include <glmrt/plugin/weight_format.h>

#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

namespace glmrt::cli {
namespace {

// A GLM-5 routed expert: gate and up are [2048, 6144], down [6144, 2048].
constexpr int64_t kGlm5Hidden = 6144, kGlm5ExpertWidth = 2048;

/// Bits per weight of one GLM-5 routed expert stored as `p`, scales included.
double glm5_expert_bits(WeightPrecision p) {
  return (2.0 * bits_per_weight(p, kGlm5Hidden) + bits_per_weight(p, kGlm5ExpertWidth)) / 3.0;
}

/// `glmrt convert --formats [--json]`: every format --experts, --dense, ...
/// and profiles accept, with its bits per weight at GLM-5's expert shapes.
void print_formats(bool json) {
  const std::vector<WeightPrecision> formats = listed_precisions();
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const WeightPrecision& p : formats)
      list.push_back({{"name", precision_name(p)}, {"bits_per_weight", glm5_expert_bits(p)}});
    fmt::print("{}\n", list.dump());
    return;
  }
  fmt::print("format      bits/weight (a GLM-5 routed expert, scales included)\n");
  for (const WeightPrecision& p : formats)
    fmt::print("{:<11} {:.4f}\n", precision_name(p), glm5_expert_bits(p));
  fmt::print(
      "(any group size N, a multiple of 8 from {} to {}, is accepted as intB-gN; these are the "
      "ones listed)\n",
      kMinWeightGroup, kMaxWeightGroup);
  // Types a model read from a GGUF file holds as they are (convert keeps
  // them, never writes them): bits per weight of their blocks, scales inside.
  fmt::print(
      "\nggml types a GGUF model may hold (kept as stored; `glmrt plugins` lists the kernels "
      "plugins that run each):\n");
  for (const uint32_t ggml_type : plugin::kGgmlWeightTypes) {
    const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(ggml_type);
    fmt::print(
        "{:<11} {:.4f}\n", plugin::element_type_name(plugin::ggml_element_type(ggml_type)),
        8.0 * static_cast<double>(traits.block_bytes) / static_cast<double>(traits.block_values));
  }
}

std::optional<WeightPrecision> optional_precision(const boost::program_options::variables_map& vm,
                                                  const char* key) {
  if (!vm.count(key)) return std::nullopt;
  return require_precision(vm[key].as<std::string>(), fmt::format("--{}", key));
}

std::pair<std::string, WeightPrecision> parse_override(const std::string& text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    fail("--override {}: expected PATTERN=FMT, such as '*.down_proj.weight=int8'", text);
  return {text.substr(0, eq),
          require_precision(text.substr(eq + 1), fmt::format("--override {}", text))};
}

}  // namespace

int convert_command(const Args& args) {
  namespace po = boost::program_options;
  std::string from, to;
  int stop_after = 0;
  std::vector<std::string> overrides;
  po::options_description options(
      "glmrt convert --from HF_DIR --to OUT_DIR [--experts FMT] [--dense FMT] [--embed FMT] "
      "[--lm-head FMT] [--kv-b FMT] [--recipe NAME] [--override PATTERN=FMT]... [--drop-mtp] "
      "[--dry-run] "
      "[--force] [--importance FILE [--method rtn|gptq]]\n       glmrt convert --formats "
      "[--json]\nFMT: f32, bf16, "
      "int8, int4, int3, int2 (one scale per row) or int8/int4/int3/int2-gN (one scale per N "
      "inputs, e.g. int4-g64)");
  options.add_options()("help,h", "show this help")(
      "formats", "list every format with its bits per weight (scales included) and exit")(
      "json", "with --formats: one JSON array of {\"name\", \"bits_per_weight\"}")(
      "from", po::value(&from),
      "Hugging Face checkpoint folder (BF16/F16/F32 or FP8 e4m3 with "
      "weight_scale_inv block scales)")(
      "to", po::value(&to), "container folder to create (written as OUT_DIR.partial, renamed)")(
      "experts", po::value<std::string>()->default_value("int4-g64"), "routed experts")(
      "dense", po::value<std::string>()->default_value("int8"),
      "attention, dense MLPs, shared experts")(
      "embed", po::value<std::string>(),
      "embed_tokens (default bf16, int8 when --dense is int4 or lower)")(
      "lm-head", po::value<std::string>(), "lm_head (default as --embed)")(
      "kv-b", po::value<std::string>(), "kv_b_proj (default as --dense)")(
      "recipe", po::value<std::string>(),
      "a named mix of precisions (q4-mix, q3-mix, q2-mix: `--recipe help` lists them); sets "
      "--experts and --dense, --override rules apply after it")(
      "override", po::value(&overrides)->composing(),
      "PATTERN=FMT: matrices whose name matches the shell pattern get FMT (the last match wins)")(
      "drop-mtp", "leave out the multi-token-prediction layer")(
      "dry-run", "print per class the size and bits per weight, write nothing")(
      "force",
      "replace an existing OUT_DIR written by convert (never another folder), discard an "
      "unfinished conversion of other options")(
      "importance", po::value<std::string>(),
      "activation statistics of `glmrt calibrate` weighting the per-group scale search")(
      "method", po::value<std::string>(),
      "with --importance: rtn (round each value, importance-weighted scale search) or gptq "
      "(feed each column's rounding error forward through the inputs' second moments); default "
      "gptq when the statistics hold second moments")(
      "gptq-damping", po::value<double>(),
      "gptq: damping added to the second moments' diagonal, as a fraction of its mean (default "
      "0.01)")("gptq-scales", po::value<std::string>(),
               "gptq: choose group scales `before` the sweep or `during` it (default)")(
      "gptq-min-rows", po::value<double>(),
      "gptq: matrices whose second moments are over fewer than this many rows per column are "
      "rounded by rtn (default 1)")(
      "target-gb", po::value<double>(),
      "with --recipe: move each MoE layer's experts down the recipe's ladder, least sensitive "
      "first, until the container fits G GB (1e9 bytes); needs --sensitivity-text and --profile")(
      "sensitivity-text", po::value<std::string>(),
      "--target-gb: calibration text the per-layer sensitivity (KL) is measured on")(
      "profile", po::value<std::string>(),
      "--target-gb: profile whose plugins run the sensitivity measurements "
      "(configs/reference.yaml)")("stop-after", po::value(&stop_after)->default_value(0),
                                  "(tests) stop after writing N files, as an interruption would");
  const auto vm = parse_options(args, options);
  if (!vm) return 0;
  if (vm->count("formats")) {
    print_formats(vm->count("json") > 0);
    return 0;
  }
  if (vm->count("json")) fail("--json: only with --formats");
  if (vm->count("recipe") && (*vm)["recipe"].as<std::string>() == "help") {
    for (const ConvertRecipe& r : convert_recipes()) fmt::print("{:<8} {}\n", r.name, r.summary);
    fmt::print("(every recipe: dense matrices int8, the MTP layer's experts at least int8)\n");
    return 0;
  }
  ConvertOptions o;
  if (from.empty()) fail("--from: the checkpoint folder is required");
  o.from = from;
  o.to = to;
  o.experts = require_precision((*vm)["experts"].as<std::string>(), "--experts");
  o.dense = require_precision((*vm)["dense"].as<std::string>(), "--dense");
  o.embed = optional_precision(*vm, "embed");
  o.lm_head = optional_precision(*vm, "lm-head");
  if (!o.lm_head) o.lm_head = o.embed;
  o.kv_b = optional_precision(*vm, "kv-b");
  for (const auto& text : overrides) o.overrides.push_back(parse_override(text));
  if (vm->count("recipe")) {
    o.recipe = find_convert_recipe((*vm)["recipe"].as<std::string>()).name;
    for (const char* key : {"experts", "dense"})
      if (!(*vm)[key].defaulted())
        fail("--recipe {} sets --{}; change single matrices with --override PATTERN=FMT", o.recipe,
             key);
  }
  o.drop_mtp = vm->count("drop-mtp") > 0;
  o.dry_run = vm->count("dry-run") > 0;
  o.force = vm->count("force") > 0;
  if (vm->count("importance")) o.importance = (*vm)["importance"].as<std::string>();
  if (vm->count("method")) {
    const std::string m = (*vm)["method"].as<std::string>();
    if (m == "rtn")
      o.method = QuantMethod::rtn;
    else if (m == "gptq")
      o.method = QuantMethod::gptq;
    else
      fail("--method {}: expected rtn or gptq", m);
  }
  if (vm->count("gptq-damping")) o.gptq_damping = (*vm)["gptq-damping"].as<double>();
  if (vm->count("gptq-min-rows")) o.gptq_min_rows_per_col = (*vm)["gptq-min-rows"].as<double>();
  if (vm->count("gptq-scales")) {
    const std::string w = (*vm)["gptq-scales"].as<std::string>();
    if (w == "before")
      o.gptq_scales = GptqScales::before;
    else if (w == "during")
      o.gptq_scales = GptqScales::during;
    else
      fail("--gptq-scales {}: expected before or during", w);
  }
  if (!o.dry_run && to.empty()) fail("--to: the output folder is required (or pass --dry-run)");
  if (vm->count("target-gb")) {
    if (!vm->count("sensitivity-text") || !vm->count("profile"))
      fail("--target-gb: needs --sensitivity-text FILE and --profile P to measure with");
    TargetSizeOptions t;
    t.target_gb = (*vm)["target-gb"].as<double>();
    t.text = (*vm)["sensitivity-text"].as<std::string>();
    t.profile = load_profile((*vm)["profile"].as<std::string>());
    t.scratch = std::filesystem::path(to).string() + ".target-trials";
    const TargetSizeReport report = convert_to_target_size(o, t);
    fmt::print("recipe {}: {:.4f} GB; target {:.4f} GB; chosen {:.4f} GB\n", o.recipe,
               report.recipe_bytes / 1e9, t.target_gb, report.chosen_bytes / 1e9);
    fmt::print("{:<7}{:>12}{:>7}{:>14}  {}\n", "layer", "KL 1 lower", "steps", "experts MB",
               "formats");
    for (const TargetSizeRow& row : report.layers)
      fmt::print("{:<7}{:>12.3e}{:>7}{:>14.3f}  {}\n", row.layer, row.sensitivity, row.steps,
                 row.bytes / 1e6, row.formats);
    fmt::print("wrote {}: {:.3f} GB\n", to, report.chosen_bytes / 1e9);
    return 0;
  }
  if (vm->count("sensitivity-text")) fail("--sensitivity-text: only with --target-gb");
  const ConvertResult r = convert_checkpoint(o, stop_after);
  if (o.dry_run) {
    fmt::print("{}", conversion_summary(r.plan));
    return 0;
  }
  fmt::print(
      "wrote {}: {} files ({} kept from an earlier run), {:.3f} GB from {:.3f} GB read in {:.1f} "
      "s ({:.0f} MB/s read, {:.0f} MB/s written)\n",
      to, r.files_written + r.files_reused, r.files_reused, r.plan.layout.total_bytes() / 1e9,
      r.source_bytes / 1e9, r.seconds, r.seconds > 0 ? r.source_bytes / 1e6 / r.seconds : 0.0,
      r.seconds > 0 ? r.bytes_written / 1e6 / r.seconds : 0.0);
  if (r.method == QuantMethod::gptq)
    fmt::print(
        "method gptq: {} matrices with error feedback ({} routed gate/up by their layer's shared "
        "moments), {} by rtn (no second moments or too few rows); {} factors in {:.1f} s\n",
        r.gptq_matrices, r.gptq_shared_matrices, r.rtn_matrices, r.gptq_factors,
        r.gptq_factor_seconds);
  return 0;
}

}  // namespace glmrt::cli
