// glmrt make-model: writes a random checkpoint with a real model's dimensions
// in the seed program's container layout (benchmarks and tests at scale).
#include "commands.h"
#include "options.h"
#include "unsigned_flag.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_maker/make_model.h>
#include <glmrt/model_maker/presets.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

namespace glmrt::cli {

int make_model_command(const Args& args) {
  namespace po = boost::program_options;
  MakeModelOptions o;
  std::string out;
  const std::vector<std::string> presets = model_preset_names();
  po::options_description options(
      "glmrt make-model --preset P --moe-layers N --out DIR [--hot-skew S] [--no-mtp] "
      "[--successor-head] [--seed N] [--experts FMT]\n"
      "glmrt make-model --preset P --moe-layers N --out FILE.gguf --format gguf "
      "[--gguf-types SPEC] [--hot-skew S] [--no-mtp] [--seed N]");
  options.add_options()("help,h", "show this help")(
      "preset", po::value(&o.preset)->required(),
      fmt::format("dimensions: {} (real ones, one dense layer first), tiny (glm_tiny's, for "
                  "tests) or tiny-256 (tiny with widths of 256, for GGUF tests of 256-value "
                  "blocks)",
                  fmt::join(presets.begin(), presets.end() - 2, ", "))
          .c_str())("moe-layers", po::value(&o.moe_layers)->required(),
                    "MoE layers after the dense one")(
      "out", po::value(&out)->required(),
      "directory to create (written as DIR.partial, renamed); with --format gguf, the file "
      "to create (never replaced)")(
      "hot-skew", po::value(&o.hot_skew)->default_value(0.0),
      "router bias towards a few hot experts per layer: S * (1 - rank/E)^4 added to "
      "e_score_correction_bias (0 = uniform routing; 0.3 = a few dozen experts take most picks)")(
      "no-mtp", "leave out the multi-token-prediction layer")(
      "successor-head",
      "lm_head = the embedding moved down one row: the model predicts token id + 1, so a prompt "
      "holding the run it will produce is one that prompt-lookup drafting predicts")(
      "seed", po::value<std::string>()->default_value("1"),
      "random seed, 0 to 2^64-1 (same seed, same bytes)")(
      "experts", po::value<std::string>()->default_value("int4"),
      "routed experts' format: int8/int4/int3/int2, per row, -gN or two-level -kN (glmrt "
      "convert --formats)")(
      "format", po::value<std::string>()->default_value("container"),
      "container (a folder: config.json + safetensors in the seed program's layout) or gguf "
      "(one file as llama.cpp writes it: glm5-slice as glm-dsa, the DeepSeek-V3 shaped presets "
      "as deepseek2)")(
      "gguf-types", po::value<std::string>(),
      "with --format gguf: ggml types per role, role=TYPE,... (roles experts, dense, kv_b, "
      "embed, output; default experts=Q4_K,dense=Q8_0, kv_b/embed/output as dense) or one "
      "type for all (Q4_0); norms, biases and the router stay F32");
  const auto vm = parse_options(args, options);
  if (!vm) return 0;
  o.out = out;
  o.seed = parse_unsigned_flag("--seed", (*vm)["seed"].as<std::string>());
  o.mtp = vm->count("no-mtp") == 0;
  o.successor_head = vm->count("successor-head") != 0;
  const std::string format = (*vm)["format"].as<std::string>();
  if (format != "container" && format != "gguf")
    fail("--format: expected container or gguf, found `{}`", printable(format));
  o.gguf = format == "gguf";
  if (o.gguf && !(*vm)["experts"].defaulted())
    fail(
        "--experts: a container format; with --format gguf give the experts' ggml type in "
        "--gguf-types (experts=Q4_0)");
  if (!o.gguf && vm->count("gguf-types")) fail("--gguf-types: only with --format gguf");
  if (vm->count("gguf-types")) o.gguf_types = (*vm)["gguf-types"].as<std::string>();
  o.experts = require_precision((*vm)["experts"].as<std::string>(), "--experts");
  const MakeModelResult r = make_model(o);
  fmt::print("wrote {}: {} file{}, {:.2f} GB in {:.1f} s ({:.2f} GB/s)\n", out, r.files,
             r.files == 1 ? "" : "s", r.bytes / 1e9, r.seconds,
             r.seconds > 0 ? r.bytes / 1e9 / r.seconds : 0.0);
  return 0;
}

}  // namespace glmrt::cli
