// Safetensors dtype names and the exact widening of stored floats to f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <glmrt/model_files/safetensors.h>

namespace glmrt::model_files {

/// The DType spelled `name` in a safetensors header ("F32", "BF16", ...).
std::optional<DType> parse_dtype(std::string_view name);

/// The comma-separated list of every dtype name, for error messages.
std::string_view known_dtype_names();

/// bfloat16 is the upper half of an f32: exact.
float bf16_to_f32(uint16_t bits);
/// IEEE 754 binary16, exact including subnormals, infinities and NaN payloads.
float f16_to_f32(uint16_t bits);

/// True when `d` can be converted by convert_to_f32.
bool converts_to_f32(DType d);

/// Converts little-endian elements of type `d` in `src` into `dst`
/// (src.size() == dst.size() * dtype_size(d)); `d` must satisfy converts_to_f32.
void convert_to_f32(DType d, std::span<const std::byte> src, std::span<float> dst);

}  // namespace glmrt::model_files
