// A GGUF model's metadata as the config.json fields its Hugging Face model
// would have, from the keys llama.cpp's converter writes for glm-dsa,
// deepseek2 and deepseek32 (docs/gguf.md has the table), so one loader
// resolves and validates both.
#pragma once

#include <filesystem>

#include "config_fields.h"

namespace glmrt::model_files {

/// Errors name the GGUF file and the key: a missing or mistyped key, an
/// architecture glmrt does not run, a value llama.cpp gives another meaning.
ConfigFields gguf_config_fields(const std::filesystem::path& gguf_model);

}  // namespace glmrt::model_files
