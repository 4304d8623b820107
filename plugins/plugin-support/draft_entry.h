// The create() of a draft plugin: checks the host speaks the draft contract
// (ABI 1.2), parses the settings and builds the drafter, turning every
// failure into the plugin's error text. Each draft plugin keeps only its
// settings parser and its drafter.
#pragma once

#include <glmrt/plugin/plugin.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace glmrt::plugin_support {

inline void write_error(char* error, size_t error_len, const std::string& message) {
  if (error && error_len > 0) std::snprintf(error, error_len, "%s", message.c_str());
}

/// `parse(settings, n, Settings&, std::string& message) -> bool` and
/// `Drafter(const glmrt_host_services&, const Settings&)`, a plugin::Draft.
template <typename Drafter, typename Settings, typename Parse>
void* create_draft(const char* name, Parse parse, const glmrt_host_services* host,
                   const glmrt_setting* settings, size_t n_settings, char* error,
                   size_t error_len) {
  try {
    if (!host || host->struct_size < sizeof(glmrt_host_services) ||
        host->abi_major != GLMRT_ABI_MAJOR || host->abi_minor < GLMRT_ABI_MINOR_DRAFT) {
      write_error(error, error_len, std::string(name) + " needs host services of ABI 1.2 or newer");
      return nullptr;
    }
    Settings parsed;
    std::string message;
    if (!parse(settings, n_settings, parsed, message)) {
      write_error(error, error_len, message);
      return nullptr;
    }
    auto draft = std::make_unique<Drafter>(*host, parsed);
    return static_cast<plugin::Draft*>(draft.release());
  } catch (const std::exception& e) {
    write_error(error, error_len, std::string(name) + ": " + e.what());
    return nullptr;
  }
}

}  // namespace glmrt::plugin_support
