// One weight row converted between f32 and the layouts the kernels read (see
// glmrt/plugin/weight_format.h): what Matrix uses for resident weights and the
// expert store for experts it converts straight into their slots.
#pragma once

#include <glmrt/base/weight_precision.h>
#include <glmrt/plugin/weight_format.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt {

/// Packs one row of f32 values as `type` into `out` (packed_row_bytes(type,
/// w.size()) bytes), as encode_row (row_codec.h) does: integer types quantize
/// symmetrically with one scale written to *scale; f32 and bf16 leave *scale
/// alone.
void pack_row(std::span<const float> w, uint32_t type, std::byte* out, float* scale);

/// Row r of a weight view as f32 (per-row or per-group scales).
void unpack_row(const glmrt_weight_view& view, int64_t r, std::span<float> out);

}  // namespace glmrt
