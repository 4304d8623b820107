#include "settings.h"

#include <setting_values.h>

#include <string_view>

namespace glmrt::kernels_avx2 {

bool parse_settings(const glmrt_setting* settings, size_t n_settings, Settings& out,
                    std::string& error) {
  using plugin_support::setting_text;
  constexpr const char* kName = "kernels-avx2";
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = setting_text(settings[i].key);
    const std::string_view value = setting_text(settings[i].value);
    if (key == "activations") {
      if (value == "int8") {
        out.activations = ActivationMode::kInt8;
      } else if (value == "int8x2") {
        out.activations = ActivationMode::kInt8Residual;
      } else if (value == "f32") {
        out.activations = ActivationMode::kF32;
      } else {
        error = plugin_support::bad_setting(kName, key, "int8, int8x2 or f32", value);
        return false;
      }
    } else if (key == "vnni") {
      if (value == "auto") {
        out.vnni_allowed = true;
      } else if (value == "off") {
        out.vnni_allowed = false;
      } else {
        error = plugin_support::bad_setting(kName, key, "auto or off", value);
        return false;
      }
    } else if (key == "pack") {
      if (value == "auto") {
        out.pack_allowed = true;
      } else if (value == "off") {
        out.pack_allowed = false;
      } else {
        error = plugin_support::bad_setting(kName, key, "auto or off", value);
        return false;
      }
    } else if (key == "logits") {
      if (value == "int8") {
        out.int8_logits = true;
      } else if (value == "same") {
        out.int8_logits = false;
      } else {
        error = plugin_support::bad_setting(kName, key, "int8 or same", value);
        return false;
      }
    } else {
      error = plugin_support::unknown_setting(kName, key, "activations, vnni, pack, logits");
      return false;
    }
  }
  return true;
}

}  // namespace glmrt::kernels_avx2
