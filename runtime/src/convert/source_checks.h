// What glmrt convert checks of its input before it writes a byte, so that it
// never writes a container `glmrt run` would refuse: config.json is one glmrt
// runs (load_model_config: model_type, every key, the layer count against the
// tensors; a `quantization_config` only as FP8 block scales), the container
// it plans passes the checks loading makes of the headers (check_loadable),
// and the tensors it copies as they are hold finite values. The matrices it
// quantizes are checked for finite values as they are read.
#pragma once

#include <glmrt/convert/conversion_plan.h>
#include <glmrt/convert/convert_options.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace glmrt {

/// The FP8 block shape `config.json`'s quantization_config gives (128x128
/// when it has none); throws naming the file and key when the key is not an
/// object of FP8 block scales.
std::array<int64_t, 2> fp8_block_of(const nlohmann::ordered_json& config,
                                    const std::filesystem::path& from);

/// Throws, naming the file, when a file the container copies (kCarriedFiles:
/// tokenizer, generation config...) is in `from` but cannot be read: a
/// dangling symbolic link (which glmrt run refuses), a folder, a FIFO. An
/// absent one is fine.
void check_carried_files(const std::filesystem::path& from);

/// Throws, naming the tensor and what was expected, when the container `plan`
/// lays out would not load with `config` (the source's, before --drop-mtp is
/// applied) or a tensor it copies holds a NaN or an infinity.
void check_convertible(const ConversionPlan& plan, ModelConfig config,
                       const ConvertOptions& options, const TensorDirectory& source);

}  // namespace glmrt
