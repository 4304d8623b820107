// glmrt calibrate: activation statistics of a text for importance-weighted
// quantization (`glmrt convert --importance`; docs/convert.md).
#include "commands.h"
#include "options.h"
#include "text_tokens.h"

#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/calibrate/calibrate.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/model_text.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/text/tokenizer.h>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include <chrono>

namespace glmrt::cli {

int calibrate_command(const Args& args) {
  namespace po = boost::program_options;
  std::string profile_path, model_dir, text_file, out = "importance.safetensors";
  int64_t window = 512, moments_max_cols = 6144, moments_budget_mb = 2048;
  po::options_description options(
      "glmrt calibrate --profile P [--model DIR] --text FILE [--out FILE] [--window N] "
      "[--no-mtp] [--moments-max-cols N] [--moments-budget-mb MB] [--force]\n  Runs the model over "
      "FILE's "
      "tokens and writes, per weight matrix, the mean of x^2\n  per input channel and the "
      "second moments X^T X of each input (safetensors) for\n  `glmrt convert --importance`. "
      "Use an f32 profile (configs/reference.yaml) for the\n  cleanest statistics.");
  options.add_options()("help,h", "show this help")("profile", po::value(&profile_path)->required(),
                                                    "profile YAML (f32: configs/reference.yaml)")(
      "model", po::value(&model_dir), kModelHelp)("text", po::value(&text_file)->required(),
                                                  "calibration text file")(
      "out", po::value(&out), "statistics file to write (default importance.safetensors)")(
      "window", po::value(&window), "tokens per window, each from an empty cache (default 512)")(
      "no-mtp", "skip the multi-token-prediction layer")(
      "moments-max-cols", po::value(&moments_max_cols),
      "second moments (X^T X, for convert --method gptq) of inputs at most N wide (default "
      "6144; 0: none)")(
      "moments-budget-mb", po::value(&moments_budget_mb),
      "most MB of second-moment accumulators at once; more layers take more passes over the "
      "text (default 2048)")(
      "force",
      "let --out replace an existing file that is not an importance file (never a model's file "
      "or a device)");
  const auto vm = parse_options(args, options);
  if (!vm) return 0;
  const Profile profile = load_profile(profile_path);
  std::filesystem::path folder = model_dir;
  if (folder.empty()) {
    if (!profile.model)
      fail("no model: pass --model DIR or set `model:` in the profile {}", profile.file);
    folder = *profile.model;
  }
  const bool force = vm->count("force") > 0;
  // Before the text is read and the model loaded: a refused --out costs nothing.
  check_output_file(out, OutputRule{importance_output_kind(), folder, force});
  if (window < 1 || window > profile.max_context)
    fail("--window {}: must be from 1 to the profile's memory.max_context ({})", window,
         profile.max_context);
  const auto tokenizer = ModelText::open(folder).tokenizer();
  const std::vector<int32_t> tokens =
      read_text_tokens("--text", text_file, tokenizer, profile, folder);
  if (tokens.empty()) fail("--text {}: the text encodes to no token", text_file);
  auto engine = Engine::open(profile, folder);
  CalibrationOptions o;
  o.window = window;
  o.mtp = vm->count("no-mtp") == 0;
  o.model_folder = folder;
  o.force_out = force;
  if (moments_max_cols < 0) fail("--moments-max-cols {}: must be 0 or more", moments_max_cols);
  if (moments_budget_mb < 1) fail("--moments-budget-mb {}: must be at least 1", moments_budget_mb);
  o.moments_max_cols = moments_max_cols;
  o.moments_budget_bytes = static_cast<uint64_t>(moments_budget_mb) << 20;
  const auto start = std::chrono::steady_clock::now();
  const CalibrationSummary summary = calibrate_to_file(
      engine->model(), [&] { return engine->new_cache(); }, tokens, o, out,
      [&](int64_t done, int64_t total) {
        fmt::print(stderr, "[calibrate {}/{} tokens, {:.1f} s]\n", done, total,
                   seconds_since(start));
      });
  fmt::print(
      "wrote {}: statistics of {} matrices over {} tokens, {} second-moment matrices in {} "
      "pass{}\n",
      out, summary.matrices, summary.tokens, summary.moments, summary.passes,
      summary.passes == 1 ? "" : "es");
  return 0;
}

}  // namespace glmrt::cli
