// The config.json of a model `glmrt make-model` writes: the real dimensions of
// GLM-5 (glm5-slice), DeepSeek-V3 (deepseek-v3-slice) or Kimi-K2
// (kimi-k2-slice), or glm_tiny's (tiny; tiny-256 with hidden and expert
// widths of 256 for GGUF block types), with one dense layer first,
// then `moe_layers` MoE layers, and an MTP layer unless asked not to.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt {

/// The preset names make-model accepts.
std::vector<std::string> model_preset_names();

/// config.json for `preset`; throws glmrt::Error for an unknown preset or
/// moe_layers < 1, listing the presets.
nlohmann::ordered_json model_preset_config(std::string_view preset, int moe_layers, bool mtp);

}  // namespace glmrt
