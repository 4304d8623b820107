#include "cache_bias_report.h"

#include <fmt/format.h>

namespace glmrt::cli {
namespace {

double substitutions_per_position(const CacheBiasCost& c) {
  return c.rows > 0 ? static_cast<double>(c.substitutions) / static_cast<double>(c.rows) : 0.0;
}

}  // namespace

std::string describe_cache_bias(const CacheBiasCost& c) {
  return fmt::format(
      "cache_bias: {:g} (routing not exact): {} substitutions in {} decode positions ({:.3f} per "
      "token, {:.2f}% of {} expert choices)",
      c.bias, c.substitutions, c.rows, substitutions_per_position(c),
      c.choices > 0 ? 100.0 * static_cast<double>(c.substitutions) / static_cast<double>(c.choices)
                    : 0.0,
      c.choices);
}

nlohmann::json cache_bias_json(const CacheBiasCost& c) {
  return {{"bias", c.bias},
          {"decode_positions", c.rows},
          {"choices", c.choices},
          {"substitutions", c.substitutions},
          {"per_token", substitutions_per_position(c)}};
}

CacheBiasCost cache_bias_so_far(const Model& model) {
  const CacheBiasRouting& r = model.cache_bias();
  return {r.bias, r.rows, r.choices, r.substitutions};
}

}  // namespace glmrt::cli
