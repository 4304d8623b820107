#include "odirect_settings.h"

#include <charconv>
#include <string_view>

namespace glmrt::io_odirect {

bool parse_settings(const glmrt_setting* settings, size_t n_settings, DirectSettings& out,
                    std::string& error) {
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = settings[i].key ? settings[i].key : "";
    const std::string_view value = settings[i].value ? settings[i].value : "";
    if (key == "threads") {
      int threads = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), threads);
      if (ec != std::errc{} || end != value.data() + value.size() || threads < 1 || threads > 64) {
        error = "io-odirect: setting `threads` expects an integer from 1 to 64, found `" +
                std::string(value) + "`";
        return false;
      }
      out.threads = threads;
    } else {
      error = "io-odirect: unknown setting `" + std::string(key) + "` (valid settings: threads)";
      return false;
    }
  }
  return true;
}

}  // namespace glmrt::io_odirect
