// Pearson's chi-square goodness of fit for the statistical tests of sampling:
// observed counts against expected probabilities, pooling the cells whose
// expected count is under 5 into one (the usual validity rule).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace glmrt::test {

struct ChiSquare {
  double statistic = 0;
  int degrees_of_freedom = 0;
  /// A bound the statistic exceeds with negligible probability when the
  /// counts do follow the law (mean df, standard deviation sqrt(2 df): six
  /// standard deviations). Seeds are fixed, so a pass is reproducible.
  double bound() const { return degrees_of_freedom + 6.0 * std::sqrt(2.0 * degrees_of_freedom); }
  bool fits() const { return statistic < bound(); }
};

inline ChiSquare chi_square(const std::vector<int64_t>& observed,
                            const std::vector<double>& probability) {
  double total = 0;
  for (int64_t n : observed) total += static_cast<double>(n);
  ChiSquare result;
  double pooled_expected = 0, pooled_observed = 0;
  int cells = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    const double expected = probability[i] * total;
    if (expected < 5.0) {
      pooled_expected += expected;
      pooled_observed += static_cast<double>(observed[i]);
      continue;
    }
    const double d = static_cast<double>(observed[i]) - expected;
    result.statistic += d * d / expected;
    ++cells;
  }
  if (pooled_expected > 0) {
    const double d = pooled_observed - pooled_expected;
    result.statistic += d * d / pooled_expected;
    ++cells;
  } else if (pooled_observed > 0) {
    result.statistic = INFINITY;  // mass where the law has none
  }
  result.degrees_of_freedom = cells > 1 ? cells - 1 : 1;
  return result;
}

}  // namespace glmrt::test
