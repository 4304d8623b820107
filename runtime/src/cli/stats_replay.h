// `glmrt stats --replay TRACE`: a routing trace through the cache policies at
// several sizes, printed as a table and plotted as SVG. Several traces given
// for one role are joined in order, as one run's.
#pragma once

#include <glmrt/history/routing_trace.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace glmrt::cli {

struct ReplayOptions {
  std::vector<std::filesystem::path> traces;
  std::vector<std::filesystem::path> learn;  // pinned+LRU learns from these traces
  std::vector<int> sizes;                    // experts per layer; empty = powers of two
  std::filesystem::path plot;                // SVG; empty = TRACE.hit-rate.svg
  double pinned_share = 0;                   // 0 = the auto share
  std::optional<RoutingShape> model_shape;   // --model's: traces of another shape are refused
  std::string model_id;                      // --model's (empty without one)
  std::filesystem::path model_folder;        // --model (empty without one): never written into
  bool force = false;                        // --plot may replace a file that is no SVG
};

int replay_traces(const ReplayOptions& options);

}  // namespace glmrt::cli
