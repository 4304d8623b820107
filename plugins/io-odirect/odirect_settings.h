// The settings io-odirect accepts from a profile's plugins.io.settings.
#pragma once

#include <glmrt/plugin/abi.h>

#include <cstddef>
#include <string>

namespace glmrt::io_odirect {

struct DirectSettings {
  /// Reads in flight at once (reader threads borrowed from the host).
  int threads = 4;
};

/// Parses the settings; an unknown key or a bad value returns false with the
/// reason in `error`.
bool parse_settings(const glmrt_setting* settings, size_t n_settings, DirectSettings& out,
                    std::string& error);

}  // namespace glmrt::io_odirect
