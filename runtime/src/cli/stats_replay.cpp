#include "stats_replay.h"

#include <glmrt/base/error.h>
#include <glmrt/history/cache_replay.h>
#include <glmrt/history/history_file.h>
#include <glmrt/history/routing_trace.h>
#include <glmrt/history/usage_svg.h>
#include <glmrt/memory/memory_plan.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>

namespace glmrt::cli {
namespace {

std::vector<int> default_sizes(int experts) {
  std::vector<int> sizes;
  for (int s = 1; s < experts; s *= 2) sizes.push_back(s);
  return sizes;
}

/// The traces of `files` joined in order (one shape), noting any recorded on
/// another model than the first (or than --model).
RoutingTrace joined_traces(const std::vector<std::filesystem::path>& files, const char* flag,
                           const ReplayOptions& o) {
  RoutingTrace joined;
  for (const auto& file : files) {
    RoutingTrace t = read_routing_trace(file, o.model_shape);
    if (joined.layers == 0) {
      joined.model_id = t.model_id;
      joined.layers = t.layers;
      joined.experts = t.experts;
      joined.top_k = t.top_k;
    } else if (t.shape() != joined.shape()) {
      fail("{} {}: its shape {} x {}, top-{} is not the first trace's {} x {}, top-{}", flag,
           file.string(), t.layers, t.experts, t.top_k, joined.layers, joined.experts,
           joined.top_k);
    }
    const std::string& reference = o.model_id.empty() ? joined.model_id : o.model_id;
    if (t.model_id != reference)
      fmt::print("note: {} {} was recorded on another model (id {}, not {})\n", flag, file.string(),
                 t.model_id, reference);
    std::move(t.steps.begin(), t.steps.end(), std::back_inserter(joined.steps));
  }
  return joined;
}

/// "a, b, c" of the files' names as given.
std::string names_of(const std::vector<std::filesystem::path>& files) {
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.string());
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

int replay_traces(const ReplayOptions& o) {
  if (o.traces.empty()) fail("--replay: give at least one trace");
  const std::filesystem::path plot =
      o.plot.empty() ? std::filesystem::path(o.traces.front().string() + ".hit-rate.svg") : o.plot;
  const OutputRule plot_rule{svg_output_kind(), o.model_folder, o.force};
  check_output_file(plot, plot_rule);  // before the replay's work
  const RoutingTrace trace = joined_traces(o.traces, "--replay", o);
  std::optional<ExpertUsage> learned;
  const std::string learn_names = names_of(o.learn);
  if (!o.learn.empty()) {
    const RoutingTrace other = joined_traces(o.learn, "--learn", o);
    if (other.layers != trace.layers || other.experts != trace.experts)
      fail("--learn {}: its shape {} x {} is not the replayed trace's {} x {}", learn_names,
           other.layers, other.experts, trace.layers, trace.experts);
    learned = other.usage();
  }
  const auto requests = cache_requests(trace);
  uint64_t lookups = 0;
  for (const CacheRequest& r : requests) lookups += r.ids.size();
  std::vector<int> sizes = o.sizes.empty() ? default_sizes(trace.experts) : o.sizes;
  std::sort(sizes.begin(), sizes.end());
  const double share = o.pinned_share > 0 ? o.pinned_share : kAutoPinnedShare;

  fmt::print(
      "trace {}: {} MoE steps, {} expert lookups (distinct experts per step), {} x {} "
      "experts, top-{}\n",
      names_of(o.traces), requests.size(), lookups, trace.layers, trace.experts, trace.top_k);
  if (learned)
    fmt::print("pinned+LRU: {:.0f}% of the slots pinned, learned from {}\n", 100 * share,
               learn_names);
  std::vector<HitRateCurve> curves{{"LRU", {}}, {"LFU", {}}};
  if (learned) curves.push_back({fmt::format("pinned {:.0f}% + LRU", 100 * share), {}});
  curves.push_back({"Belady (cold)", {}});
  // Warm: every slot starts with the learned experts, the pinned set's head
  // start and more; the bound pinned+LRU is measured against.
  if (learned) curves.push_back({"Belady (warm)", {}});
  std::string header = fmt::format("{:>8}", "size");
  for (const auto& c : curves) header += fmt::format("  {:>18}", c.name);
  if (learned) header += fmt::format("  {:>16}", "pinned/warm");
  fmt::print("hit rate by cache size (experts per layer; every policy gets the same slots):\n{}\n",
             header);
  for (int size : sizes) {
    std::vector<ReplayResult> results{replay_lru(requests, trace.layers, trace.experts, size),
                                      replay_lfu(requests, trace.layers, trace.experts, size)};
    if (learned)
      results.push_back(
          replay_pinned_lru(requests, trace.layers, trace.experts, size, *learned, share));
    results.push_back(replay_belady(requests, trace.layers, trace.experts, size));
    if (learned)
      results.push_back(replay_belady(requests, trace.layers, trace.experts, size,
                                      choose_pinned(*learned, int64_t{trace.layers} * size)));
    std::string row = fmt::format("{:>8}", size);
    for (size_t c = 0; c < results.size(); ++c) {
      curves[c].hit_rates.push_back(results[c].hit_rate());
      row += fmt::format("  {:>17.1f}%", 100 * results[c].hit_rate());
    }
    if (learned) {
      const double best = results.back().hit_rate();
      row += best > 0 ? fmt::format("  {:>15.0f}%", 100 * results[2].hit_rate() / best)
                      : fmt::format("  {:>16}", "-");
    }
    fmt::print("{}\n", row);
  }
  write_file_atomically(
      plot,
      hit_rate_svg(sizes, curves,
                   fmt::format("Expert cache hit rate: {}", o.traces.front().filename().string())),
      plot_rule);
  fmt::print("plot: {}\n", plot.string());
  return 0;
}

}  // namespace glmrt::cli
