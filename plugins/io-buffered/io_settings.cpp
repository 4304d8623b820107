#include "io_settings.h"

#include <charconv>
#include <string_view>

namespace glmrt::io_buffered {

bool parse_settings(const glmrt_setting* settings, size_t n_settings, IoSettings& out,
                    std::string& error) {
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = settings[i].key ? settings[i].key : "";
    const std::string_view value = settings[i].value ? settings[i].value : "";
    if (key == "threads") {
      int threads = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), threads);
      if (ec != std::errc{} || end != value.data() + value.size() || threads < 1 ||
          threads > 1024) {
        error = "io-buffered: setting `threads` expects an integer from 1 to 1024, found `" +
                std::string(value) + "`";
        return false;
      }
      out.threads = threads;
    } else if (key == "drop_after_read") {
      if (value == "true") {
        out.drop_after_read = true;
      } else if (value == "false") {
        out.drop_after_read = false;
      } else {
        error = "io-buffered: setting `drop_after_read` expects true or false, found `" +
                std::string(value) + "`";
        return false;
      }
    } else {
      error = "io-buffered: unknown setting `" + std::string(key) +
              "` (valid settings: threads, drop_after_read)";
      return false;
    }
  }
  return true;
}

}  // namespace glmrt::io_buffered
