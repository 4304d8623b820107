#include "settings.h"

#include <string_view>

namespace glmrt::kernels_avx2 {

std::optional<Settings> parse_settings(const glmrt_setting* settings, size_t n_settings,
                                       std::string& error) {
  Settings parsed;
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = settings[i].key ? settings[i].key : "";
    const std::string_view value = settings[i].value ? settings[i].value : "";
    if (key == "activations") {
      if (value == "int8") {
        parsed.activations = ActivationMode::kInt8;
      } else if (value == "f32") {
        parsed.activations = ActivationMode::kF32;
      } else {
        error = "setting `activations`: expected `int8` or `f32`, got `" + std::string(value) + "`";
        return std::nullopt;
      }
    } else {
      error = "unknown setting `" + std::string(key) + "` (kernels-avx2 knows: activations)";
      return std::nullopt;
    }
  }
  return parsed;
}

}  // namespace glmrt::kernels_avx2
