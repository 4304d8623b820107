// glmrt stats: the expert usage history of a model (summary, heatmap, reset,
// STATS import/export), or a routing trace replayed through cache policies.
#include "commands.h"
#include "options.h"
#include "stats_replay.h"

#include <glmrt/base/error.h>
#include <glmrt/history/history_file.h>
#include <glmrt/history/model_id.h>
#include <glmrt/history/stats_file.h>
#include <glmrt/history/usage_history.h>
#include <glmrt/history/usage_svg.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/profile/profile.h>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include <cmath>
#include <sstream>

namespace glmrt::cli {
namespace {

namespace po = boost::program_options;

std::vector<int> parse_sizes(const std::string& text) {
  std::vector<int> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size() || v < 0) throw std::invalid_argument(item);
      sizes.push_back(v);
    } catch (const std::exception&) {
      fail("--sizes: expected comma-separated non-negative integers, found `{}`", item);
    }
  }
  return sizes;
}

std::string layer_name(const ModelConfig& c, int layer) {
  return layer == c.num_hidden_layers ? std::string("MTP") : fmt::format("{}", layer);
}

void print_summary(const ModelConfig& c, const UsageHistory& history) {
  const ExpertUsage& u = history.totals();
  const int E = u.experts();
  const int top1 = std::max(1, static_cast<int>(std::ceil(0.01 * E)));
  const int top10 = std::max(1, static_cast<int>(std::ceil(0.10 * E)));
  fmt::print("history: {} ({} selections)\n", history.file().string(), u.total());
  fmt::print("{:>6}  {:>12}  {:>12}  {:>14}  {:>14}\n", "layer", "selections", "experts seen",
             fmt::format("top 1% ({})", top1), fmt::format("top 10% ({})", top10));
  for (int l = 0; l < u.layers(); ++l) {
    if (l < c.num_hidden_layers && c.mlp_kind(l) != MlpKind::sparse) continue;
    const auto row = u.row(l);
    const auto seen = std::count_if(row.begin(), row.end(), [](uint64_t n) { return n > 0; });
    fmt::print("{:>6}  {:>12}  {:>7}/{:<4}  {:>13.1f}%  {:>13.1f}%\n", layer_name(c, l),
               u.layer_total(l), seen, E, 100 * u.top_share(l, top1), 100 * u.top_share(l, top10));
  }
}

}  // namespace

int stats_command(const Args& args) {
  po::options_description options(
      "glmrt stats --model DIR [--profile P] [--reset] [--import F] [--export F] [--heatmap F] "
      "[--force]\n"
      "glmrt stats --replay TRACE [--learn TRACE2] [--model DIR] [--sizes 1,2,4] [--plot F] "
      "[--force]");
  std::string model, profile_path, import, export_to, heatmap, sizes, plot;
  std::vector<std::string> replay, learn;
  double share = 0;
  options.add_options()("help,h", "show this help")(
      "model", po::value(&model), "the model (a folder or a GGUF file) whose history to show")(
      "profile", po::value(&profile_path),
      "profile whose memory.history says where histories live")(
      "reset", "delete the model's history")("import", po::value(&import),
                                             "add a STATS file's counts (`layer expert count` "
                                             "lines, as the seed program writes them)")(
      "export", po::value(&export_to), "write the history as a STATS file")(
      "heatmap", po::value(&heatmap),
      "where to write the layer x expert heatmap (SVG; default: beside the history)")(
      "replay", po::value(&replay),
      "routing trace to replay through cache policies (repeat: joined in order)")(
      "learn", po::value(&learn),
      "a second trace the pinned+LRU policy learns its pinned set from (repeat: joined)")(
      "sizes", po::value(&sizes), "cache sizes to replay, experts per layer (default 1,2,4,...)")(
      "plot", po::value(&plot),
      "where to write the hit-rate curves (SVG; default TRACE.hit-rate.svg)")(
      "pinned-share", po::value(&share),
      "share of the slots pinned (default: memory.pinned auto's)")(
      "force",
      "let --export, --heatmap and --plot replace an existing file of another kind (never a "
      "model's file or a device)");
  const auto vm = parse_options(args, options);
  if (!vm) return 0;
  const bool force = vm->count("force") > 0;
  if (!replay.empty()) {
    if (share < 0 || share >= 1) fail("--pinned-share: expected a fraction in [0, 1)");
    ReplayOptions o;
    o.traces.assign(replay.begin(), replay.end());
    o.learn.assign(learn.begin(), learn.end());
    o.sizes = parse_sizes(sizes);
    o.plot = plot;
    o.pinned_share = share;
    o.force = force;
    o.model_folder = model;
    if (!model.empty()) {
      // The traces must be of this model's shape: checked before they are read whole.
      const TensorDirectory tensors = TensorDirectory::open(model);
      const ModelConfig config = load_model_config(model, tensors);
      o.model_shape =
          RoutingShape{config.num_hidden_layers + (config.num_nextn_predict_layers > 0 ? 1 : 0),
                       config.n_routed_experts, config.num_experts_per_tok};
      o.model_id = model_id(model, tensors);
    }
    return replay_traces(o);
  }
  if (!learn.empty()) fail("stats: --learn goes with --replay TRACE");
  if (model.empty()) fail("stats: give --model DIR (a history) or --replay TRACE");

  std::optional<std::filesystem::path> folder;
  if (!profile_path.empty()) {
    const Profile profile = load_profile(profile_path);
    if (!profile.history) fail("stats: {} sets memory.history: off", profile_path);
    folder = profile.history_folder;
  }
  const TensorDirectory tensors = TensorDirectory::open(model);
  const ModelConfig config = load_model_config(model, tensors);
  const int rows = config.num_hidden_layers + (config.num_nextn_predict_layers > 0 ? 1 : 0);
  // Checked before anything is done: a refused output changes nothing.
  const OutputRule export_rule{stats_output_kind(), model, force},
      heatmap_rule{svg_output_kind(), model, force};
  if (!export_to.empty()) check_output_file(export_to, export_rule);
  if (!heatmap.empty()) check_output_file(heatmap, heatmap_rule);
  UsageHistory history(folder, model_id(model, tensors), rows, config.n_routed_experts);
  fmt::print("model: {} (id {})\n", model, history.model_id());
  if (vm->count("reset")) {
    history.reset();
    fmt::print("history cleared: {}\n", history.file().string());
    return 0;
  }
  if (!import.empty()) {
    const ExpertUsage counts = read_stats_file(import, rows, config.n_routed_experts);
    if (!history.totals().can_add(counts.total()))
      fail(
          "--import {}: the history holds {} selections and the file {}; together they pass 2^64 "
          "- 1: refused, as a wrapped count would be wrong (--reset the history first)",
          import, history.totals().total(), counts.total());
    history.add(counts);
    history.save();
    fmt::print("imported {} selections from {}\n", counts.total(), import);
  }
  if (!export_to.empty()) {
    write_file_atomically(export_to, format_stats(history.totals()), export_rule);
    fmt::print("exported {} selections to {}\n", history.totals().total(), export_to);
  }
  print_summary(config, history);
  if (history.totals().empty()) {
    fmt::print("no selections recorded yet: run the model (glmrt run/chat) to build a history\n");
    return 0;
  }
  const std::filesystem::path svg = heatmap.empty()
                                        ? history.file().parent_path() / "expert-usage.svg"
                                        : std::filesystem::path(heatmap);
  std::vector<std::string> names;
  for (int l = 0; l < rows; ++l) names.push_back(layer_name(config, l));
  check_output_file(svg, heatmap_rule);
  std::filesystem::create_directories(svg.parent_path().empty() ? "." : svg.parent_path());
  write_file_atomically(
      svg, usage_heatmap_svg(history.totals(), names, fmt::format("Expert usage: {}", model)),
      heatmap_rule);
  fmt::print("heatmap: {}\n", svg.string());
  return 0;
}

}  // namespace glmrt::cli
