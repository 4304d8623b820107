// The bytes of a planned tensor, drawn deterministically: row r of a tensor
// depends only on the seed, the tensor's randomness key and r, so rows can be
// generated in any order on any number of threads.
#pragma once

#include <glmrt/model_maker/model_plan.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt {

/// Writes rows [first, first + count) of `t` (see PlannedTensor::generation_rows)
/// into `out`, which holds exactly those rows' bytes.
void fill_tensor_rows(const PlannedTensor& t, uint64_t seed, int64_t first, int64_t count,
                      std::span<std::byte> out);

/// Standard deviation of the random packed values of `packed_type` (their
/// scales turn it into the recipe's stddev).
double packed_value_stddev(uint32_t packed_type);

}  // namespace glmrt
