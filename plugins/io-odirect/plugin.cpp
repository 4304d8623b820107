// Descriptor and factory of io-odirect.
#include "direct_io.h"

#include <glmrt/plugin/plugin.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace {

void write_error(char* error, size_t error_len, const std::string& message) {
  if (error && error_len > 0) std::snprintf(error, error_len, "%s", message.c_str());
}

// Supported on any Linux: a filesystem that refuses O_DIRECT is found out
// per file, and read through the page cache with a warning.
void probe(glmrt_probe_result* out) {
#ifdef __linux__
  out->supported = 1;
  out->score = 10;
  std::snprintf(out->reason, sizeof(out->reason),
                "O_DIRECT reads into aligned buffers (page cache fallback per file)");
#else
  out->supported = 0;
  out->score = 0;
  std::snprintf(out->reason, sizeof(out->reason), "O_DIRECT reads need Linux");
#endif
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  try {
    if (!host || host->abi_major != GLMRT_ABI_MAJOR || !GLMRT_HOST_HAS_THREADS(host)) {
      write_error(error, error_len,
                  "io-odirect needs host services of ABI 1.1 or later (start_thread)");
      return nullptr;
    }
    glmrt::io_odirect::DirectSettings parsed;
    std::string message;
    if (!glmrt::io_odirect::parse_settings(settings, n_settings, parsed, message)) {
      write_error(error, error_len, message);
      return nullptr;
    }
    auto io = std::make_unique<glmrt::io_odirect::DirectIo>(*host, parsed);
    return static_cast<glmrt::plugin::Io*>(io.release());
  } catch (const std::exception& e) {
    write_error(error, error_len, std::string("io-odirect: ") + e.what());
    return nullptr;
  }
}

const glmrt_plugin_descriptor kDescriptor = {
    sizeof(glmrt_plugin_descriptor),
    GLMRT_ABI_MAJOR,
    GLMRT_ABI_MINOR,
    GLMRT_PLUGIN_IO,
    "io-odirect",
    "1.0.0",
    "asynchronous O_DIRECT reads into the host's aligned buffers, several in flight",
    &probe,
    &create,
};

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
