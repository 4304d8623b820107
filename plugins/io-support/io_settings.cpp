#include "io_settings.h"

#include <setting_values.h>

#include <string_view>

namespace glmrt::io_support {

bool parse_io_settings(const IoSettingsRules& rules, const glmrt_setting* settings,
                       size_t n_settings, IoSettings& out, std::string& error) {
  using plugin_support::bad_setting, plugin_support::parse_flag, plugin_support::parse_integer,
      plugin_support::setting_text, plugin_support::unknown_setting;
  out = rules.defaults;
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = setting_text(settings[i].key);
    const std::string_view value = setting_text(settings[i].value);
    if (key == "threads") {
      if (!parse_integer(value, 1, rules.max_threads, out.threads)) {
        error = bad_setting(rules.plugin, key,
                            "an integer from 1 to " + std::to_string(rules.max_threads), value);
        return false;
      }
    } else if (key == "drop_after_read" && rules.takes_drop_after_read) {
      if (!parse_flag(value, out.drop_after_read)) {
        error = bad_setting(rules.plugin, key, "true or false", value);
        return false;
      }
    } else {
      error = unknown_setting(rules.plugin, key,
                              rules.takes_drop_after_read ? "threads, drop_after_read" : "threads");
      return false;
    }
  }
  return true;
}

}  // namespace glmrt::io_support
