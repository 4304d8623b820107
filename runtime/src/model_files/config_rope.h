// Reads the RoPE of a config.json: `rope_parameters` (transformers v5, GLM-5)
// or `rope_theta` + `rope_scaling` (the released DeepSeek-V3 / Kimi-K2
// configs), the default RoPE or YaRN.
#pragma once

#include <glmrt/model_files/rope_settings.h>

#include "config_fields.h"

namespace glmrt::model_files {

/// Refuses another rope type, a key of the rope object glmrt would ignore, and
/// out-of-range values, naming the key. `max_position_embeddings` stands in for
/// an absent original_max_position_embeddings (and factor), as transformers does.
RopeSettings read_rope_settings(const ConfigFields& fields, int max_position_embeddings);

}  // namespace glmrt::model_files
