#include "finite_values.h"

#include <glmrt/model_files/non_finite.h>

#include <fmt/ranges.h>

namespace glmrt::model_files {

void NonFiniteValues::merge(const NonFiniteValues& later, size_t offset) {
  if (later.count == 0) return;
  if (count == 0) {
    first_index = offset + later.first_index;
    first_value = later.first_value;
  }
  count += later.count;
}

// The raw-bytes scanner the expert store uses is the one implementation; a
// span of f32 is its F32 case.
NonFiniteValues find_non_finite(std::span<const float> values) {
  const NonFiniteCount scanned = count_non_finite(DType::F32, std::as_bytes(values));
  NonFiniteValues found;
  if (scanned.count == 0) return found;
  found.count = static_cast<size_t>(scanned.count);
  found.first_index = static_cast<size_t>(scanned.first);
  found.first_value = values[found.first_index];
  return found;
}

std::string element_coordinates(size_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const auto extent = static_cast<size_t>(shape[d] > 0 ? shape[d] : 1);
    at[d] = static_cast<int64_t>(index % extent);
    index /= extent;
  }
  return fmt::format("[{}]", fmt::join(at, ", "));
}

}  // namespace glmrt::model_files
