// The create() half of an in-tree io plugin's descriptor, the same for all of
// them: the host must offer ABI 1.1 services (start_thread, for the reader
// threads), the plugin parses its own settings, and any failure is written to
// the host's error buffer instead of crossing the C boundary as an exception.
#pragma once

#include <glmrt/plugin/host_services.h>
#include <glmrt/plugin/io.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace glmrt::io_support {

inline void write_error(char* error, size_t error_len, const std::string& message) {
  if (error && error_len > 0) std::snprintf(error, error_len, "%s", message.c_str());
}

/// A new IoType(*host, settings) as the plugin::Io the host takes, or nullptr
/// with the reason in `error`. IoType::kName names the plugin in messages.
template <typename IoType, typename Settings>
void* create_io(bool (*parse_settings)(const glmrt_setting*, size_t, Settings&, std::string&),
                const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
                char* error, size_t error_len) noexcept {
  try {
    if (!host || host->abi_major != GLMRT_ABI_MAJOR || !GLMRT_HOST_HAS_THREADS(host)) {
      write_error(
          error, error_len,
          std::string(IoType::kName) + " needs host services of ABI 1.1 or later (start_thread)");
      return nullptr;
    }
    Settings parsed;
    std::string message;
    if (!parse_settings(settings, n_settings, parsed, message)) {
      write_error(error, error_len, message);
      return nullptr;
    }
    auto io = std::make_unique<IoType>(*host, parsed);
    return static_cast<plugin::Io*>(io.release());
  } catch (const std::exception& e) {
    write_error(error, error_len, std::string(IoType::kName) + ": " + e.what());
    return nullptr;
  }
}

}  // namespace glmrt::io_support
