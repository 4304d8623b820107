// The entry point every in-tree plugin shares: its descriptor, and the body of
// its create(), which refuses host services older than the plugin calls,
// parses the settings and builds the object, turning every failure into the
// plugin's error text (no exception crosses the C boundary). Each plugin
// keeps only its probe, its settings parser and its object.
#pragma once

#include <glmrt/plugin/plugin.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

namespace glmrt::plugin_support {

/// Copies `message` into a buffer of the host's (an error, a probe's
/// reason), cut to fit and NUL-terminated.
inline void write_message(char* out, size_t out_len, const std::string& message) {
  if (out && out_len > 0) std::snprintf(out, out_len, "%s", message.c_str());
}

/// Bytes of glmrt_host_services that hold the services of ABI 1.`minor`.
constexpr size_t host_services_bytes(int minor) {
  return minor >= GLMRT_ABI_MINOR_ASYNC_IO
             ? offsetof(glmrt_host_services, join_thread) + sizeof(glmrt_host_services::join_thread)
             : offsetof(glmrt_host_services, log) + sizeof(glmrt_host_services::log);
}

/// Why `host` cannot serve plugin `name`, which calls the host services of
/// ABI 1.`min_minor` (memory from 1.0, threads from 1.1), or "" when it can.
inline std::string host_refusal(std::string_view name, const glmrt_host_services* host,
                                int min_minor) {
  const std::string needs = std::string(name) + " needs host services of ABI " +
                            std::to_string(GLMRT_ABI_MAJOR) + "." + std::to_string(min_minor) +
                            " or newer";
  if (!host) return needs + "; the host passed none";
  const std::string offered =
      "; the host's are " + std::to_string(host->abi_major) + "." + std::to_string(host->abi_minor);
  if (host->abi_major != GLMRT_ABI_MAJOR || host->abi_minor < min_minor) return needs + offered;
  const bool complete =
      host->struct_size >= host_services_bytes(min_minor) && host->alloc && host->free &&
      (min_minor < GLMRT_ABI_MINOR_ASYNC_IO || (host->start_thread && host->join_thread));
  return complete ? std::string() : needs + offered + ", with services missing";
}

/// The settings of a plugin that takes none.
struct NoSettings {};

/// Refuses any setting, naming it (a plugin that takes none).
inline bool parse_no_settings(std::string_view name, const glmrt_setting* settings,
                              size_t n_settings, std::string& error) {
  if (n_settings == 0) return true;
  error = std::string(name) + " takes no settings; unknown setting `" +
          (settings && settings[0].key ? settings[0].key : "") + "`";
  return false;
}

/// The body of create() for plugin `name`: refuses a host whose services are
/// older than ABI 1.`min_minor`, then `parse(settings, n_settings, Settings&,
/// std::string& error) -> bool` (false: `error` says why), then
/// `make(host, settings)`, a smart pointer to the object, handed to the host
/// as the `Interface*` (plugin::Kernels, Io or Draft) it takes.
template <typename Interface, typename Settings, typename Parse, typename Make>
void* create_plugin(std::string_view name, int min_minor, Parse parse, Make make,
                    const glmrt_host_services* host, const glmrt_setting* settings,
                    size_t n_settings, char* error, size_t error_len) noexcept {
  try {
    if (const std::string refusal = host_refusal(name, host, min_minor); !refusal.empty()) {
      write_message(error, error_len, refusal);
      return nullptr;
    }
    Settings parsed;
    std::string message;
    if (!parse(settings, n_settings, parsed, message)) {
      write_message(error, error_len, message);
      return nullptr;
    }
    Interface* object = make(*host, parsed).release();
    return object;
  } catch (const std::exception& e) {
    write_message(error, error_len, std::string(name) + ": " + e.what());
  } catch (...) {
    write_message(error, error_len, std::string(name) + ": unknown error while creating");
  }
  return nullptr;
}

/// The `make` of create_plugin for an object built as Object(host, settings).
template <typename Object>
inline constexpr auto construct = [](const glmrt_host_services& host, const auto& settings) {
  return std::make_unique<Object>(host, settings);
};

/// The descriptor of an in-tree plugin: built with this SDK, so of its ABI
/// (`abi_minor` lower only for a test plugin declaring an older one).
constexpr glmrt_plugin_descriptor plugin_descriptor(glmrt_plugin_kind kind, const char* name,
                                                    const char* version, const char* description,
                                                    glmrt_probe_fn probe, glmrt_create_fn create,
                                                    uint16_t abi_minor = GLMRT_ABI_MINOR) {
  return {sizeof(glmrt_plugin_descriptor),
          GLMRT_ABI_MAJOR,
          abi_minor,
          static_cast<uint32_t>(kind),
          name,
          version,
          description,
          probe,
          create};
}

}  // namespace glmrt::plugin_support
