#include "stats_replay.h"

#include <glmrt/base/error.h>
#include <glmrt/history/cache_replay.h>
#include <glmrt/history/history_file.h>
#include <glmrt/history/routing_trace.h>
#include <glmrt/history/usage_svg.h>
#include <glmrt/memory/memory_plan.h>

#include <fmt/format.h>

#include <algorithm>

namespace glmrt::cli {
namespace {

std::vector<int> default_sizes(int experts) {
  std::vector<int> sizes;
  for (int s = 1; s < experts; s *= 2) sizes.push_back(s);
  return sizes;
}

}  // namespace

int replay_traces(const ReplayOptions& o) {
  const RoutingTrace trace = read_routing_trace(o.trace);
  std::optional<ExpertUsage> learned;
  if (o.learn) {
    const RoutingTrace other = read_routing_trace(*o.learn);
    if (other.layers != trace.layers || other.experts != trace.experts)
      fail("--learn {}: its shape {} x {} is not the replayed trace's {} x {}", o.learn->string(),
           other.layers, other.experts, trace.layers, trace.experts);
    if (other.model_id != trace.model_id)
      fmt::print("note: --learn {} was recorded on another model (id {})\n", o.learn->string(),
                 other.model_id);
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
      o.trace.string(), requests.size(), lookups, trace.layers, trace.experts, trace.top_k);
  if (learned)
    fmt::print("pinned+LRU: {:.0f}% of the slots pinned, learned from {}\n", 100 * share,
               o.learn->string());
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
  const std::filesystem::path plot =
      o.plot.empty() ? std::filesystem::path(o.trace.string() + ".hit-rate.svg") : o.plot;
  write_file_atomically(
      plot, hit_rate_svg(sizes, curves,
                         fmt::format("Expert cache hit rate: {}", o.trace.filename().string())));
  fmt::print("plot: {}\n", plot.string());
  return 0;
}

}  // namespace glmrt::cli
