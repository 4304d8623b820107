// `glmrt stats --replay TRACE`: a routing trace through the cache policies at
// several sizes, printed as a table and plotted as SVG.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace glmrt::cli {

struct ReplayOptions {
  std::filesystem::path trace;
  std::optional<std::filesystem::path> learn;  // pinned+LRU learns from this trace
  std::vector<int> sizes;                      // experts per layer; empty = powers of two
  std::filesystem::path plot;                  // SVG; empty = TRACE.hit-rate.svg
  double pinned_share = 0;                     // 0 = the auto share
};

int replay_traces(const ReplayOptions& options);

}  // namespace glmrt::cli
