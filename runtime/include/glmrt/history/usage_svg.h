// Pictures a person can open in a browser: the usage heatmap (layer x expert,
// each cell's share of its layer's selections) and the hit-rate curves of a
// replay. Plain SVG, no dependencies.
#pragma once

#include <glmrt/base/atomic_file.h>
#include <glmrt/history/expert_usage.h>

#include <string>
#include <vector>

namespace glmrt {

/// Rows are layers (`row_names[l]` labels row l, empty rows are dropped when
/// they are all zero), columns experts; colour = count / the layer's largest.
std::string usage_heatmap_svg(const ExpertUsage& usage, const std::vector<std::string>& row_names,
                              const std::string& title);

struct HitRateCurve {
  std::string name;
  std::vector<double> hit_rates;  // one per size
};

/// What the heatmap and the replay's plot are: an existing file is an
/// earlier image when it starts with `<svg` or `<?xml` and its first 4 KiB
/// hold `<svg`.
OutputKind svg_output_kind();

/// Hit rate (0..1) against cache size (experts per layer), one line per curve.
std::string hit_rate_svg(const std::vector<int>& sizes, const std::vector<HitRateCurve>& curves,
                         const std::string& title);

}  // namespace glmrt
