// Finding NaN and infinities among weights as they are read. Quantization
// would turn a NaN into 0 silently (max() skips it) and f32 carries it to the
// logits, where it says nothing about which tensor was broken.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace glmrt::model_files {

/// The non-finite values of a span: how many, and the first one.
struct NonFiniteValues {
  size_t count = 0;
  size_t first_index = 0;  // valid when count > 0
  float first_value = 0;

  /// Adds the findings of a later span that starts at element `offset`.
  void merge(const NonFiniteValues& later, size_t offset);
};

/// Counts NaN and ±inf in `values` (count_non_finite of glmrt/experts/
/// non_finite.h: integer tests on the bit patterns, which vectorise and do
/// not depend on floating-point flags).
NonFiniteValues find_non_finite(std::span<const float> values);

/// "[row, column]" (or "[i, j, k]") of element `index` of a row-major tensor.
std::string element_coordinates(size_t index, const std::vector<int64_t>& shape);

}  // namespace glmrt::model_files
