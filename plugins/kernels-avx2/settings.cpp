#include "settings.h"

#include <setting_values.h>

#include <string_view>

namespace glmrt::kernels_avx2 {
namespace {

constexpr const char* kName = "kernels-avx2";

/// A setting of two values: `yes` sets `flag`, `no` clears it.
bool two_way(std::string_view key, std::string_view value, std::string_view yes,
             std::string_view no, bool& flag, std::string& error) {
  if (value != yes && value != no) {
    error =
        plugin_support::bad_setting(kName, key, std::string(yes) + " or " + std::string(no), value);
    return false;
  }
  flag = value == yes;
  return true;
}

}  // namespace

bool parse_settings(const glmrt_setting* settings, size_t n_settings, Settings& out,
                    std::string& error) {
  using plugin_support::setting_text;
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
      if (!two_way(key, value, "auto", "off", out.vnni_allowed, error)) return false;
    } else if (key == "avx512") {
      if (!two_way(key, value, "auto", "off", out.avx512_allowed, error)) return false;
    } else if (key == "pack") {
      if (!two_way(key, value, "auto", "off", out.pack_allowed, error)) return false;
    } else if (key == "logits") {
      if (!two_way(key, value, "int8", "same", out.int8_logits, error)) return false;
    } else {
      error =
          plugin_support::unknown_setting(kName, key, "activations, vnni, avx512, pack, logits");
      return false;
    }
  }
  return true;
}

}  // namespace glmrt::kernels_avx2
