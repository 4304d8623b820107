// The format stamp of a container file: `__metadata__["quant_formats"]`, a
// string holding a JSON object {tensor name: "f32" | "bf16" | "int8" | "int4" |
// "int2"}. Written by glmrt make-model (and convert); other files have none.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include <glmrt/model_files/safetensors.h>

namespace glmrt::model_files {

/// Sets TensorInfo::stamp from `metadata` (the header's `__metadata__`
/// object). Refuses, naming the file and the tensor: a stamp that is not a
/// string holding a JSON object, an unknown format, a tensor this file does
/// not hold, and a stamp the tensor's dtype contradicts (f32 on a non-F32
/// tensor, bf16 on a non-BF16 one, a packed format on anything but U8/I8).
/// Byte counts are checked where the matrix shape is known (weights/stored_matrix).
void apply_quant_format_stamp(const nlohmann::json& metadata, std::vector<TensorInfo>& tensors,
                              const std::filesystem::path& file);

}  // namespace glmrt::model_files
