// The settings io-buffered accepts from a profile's plugins.io.settings.
#pragma once

#include <glmrt/plugin/abi.h>

#include <cstddef>
#include <string>

namespace glmrt::io_buffered {

struct IoSettings {
  /// Reads in flight at once (reader threads); 0 = the host's thread count.
  int threads = 0;
  /// Drop read pages from the page cache (POSIX_FADV_DONTNEED) once copied.
  bool drop_after_read = false;
};

/// Parses the settings; an unknown key or a bad value returns false with the
/// reason in `error`.
bool parse_settings(const glmrt_setting* settings, size_t n_settings, IoSettings& out,
                    std::string& error);

}  // namespace glmrt::io_buffered
