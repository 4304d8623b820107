// glm_tiny as a pre-quantized container: routed experts stored as U8 packed
// int4/int8 rows plus F32 `<name>.qs` per-row scales, quantized exactly as the
// runtime quantizes f32 experts on the fly (so both give the same weights),
// in either container layout.
#pragma once

#include <filesystem>

#include "host_tensor.h"

namespace glmrt::test {

enum class ContainerLayout {
  /// Each expert's matrices and scales contiguous: one read per expert.
  contiguous,
  /// Each expert's three matrices adjacent, a layer's scales together after
  /// its experts (the seed program's layout): two reads per expert.
  seed,
};

/// Writes glm_tiny's tensors into `dir` (2 shards + index + config.json) with
/// experts packed as `packed_type` (GLMRT_I4 or GLMRT_I8).
void write_prequantized_tiny(const std::filesystem::path& dir, uint32_t packed_type,
                             ContainerLayout layout);

}  // namespace glmrt::test
