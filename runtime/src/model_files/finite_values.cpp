#include "finite_values.h"

#include <fmt/ranges.h>

#include <bit>

namespace glmrt::model_files {

void NonFiniteValues::merge(const NonFiniteValues& later, size_t offset) {
  if (later.count == 0) return;
  if (count == 0) {
    first_index = offset + later.first_index;
    first_value = later.first_value;
  }
  count += later.count;
}

namespace {

constexpr uint32_t kExponent = 0x7f800000u;  // all ones: inf or NaN

bool is_non_finite(float v) {
  return (std::bit_cast<uint32_t>(v) & kExponent) == kExponent;
}

}  // namespace

NonFiniteValues find_non_finite(std::span<const float> values) {
  // The common case, all finite, is one OR-reduction over 32-bit lanes (full
  // vector width); counting and locating only run when something was found.
  uint32_t any = 0;
  for (const float v : values) any |= static_cast<uint32_t>(is_non_finite(v));
  NonFiniteValues found;
  if (any == 0) return found;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!is_non_finite(values[i])) continue;
    if (found.count++ == 0) {
      found.first_index = i;
      found.first_value = values[i];
    }
  }
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
