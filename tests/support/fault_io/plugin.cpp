// Descriptor and factory of fault-io (built for the tests only, never installed).
#include "fault_io.h"

#include <glmrt/plugin/plugin.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace {

void write_error(char* error, size_t error_len, const std::string& message) {
  if (error && error_len > 0) std::snprintf(error, error_len, "%s", message.c_str());
}

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 0;
  std::snprintf(out->reason, sizeof(out->reason), "test plugin: pread with injected faults");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  try {
    if (!host || host->abi_major != GLMRT_ABI_MAJOR || !GLMRT_HOST_HAS_THREADS(host)) {
      write_error(error, error_len, "fault-io needs host services of ABI 1.1 or later");
      return nullptr;
    }
    glmrt::fault_io::FaultSettings parsed;
    std::string message;
    if (!glmrt::fault_io::parse_settings(settings, n_settings, parsed, message)) {
      write_error(error, error_len, message);
      return nullptr;
    }
    auto io = std::make_unique<glmrt::fault_io::FaultIo>(*host, parsed);
    return static_cast<glmrt::plugin::Io*>(io.release());
  } catch (const std::exception& e) {
    write_error(error, error_len, std::string("fault-io: ") + e.what());
    return nullptr;
  }
}

// FAULT_IO_ABI_MINOR=0 builds the copy that declares ABI 1.0: the host then
// calls read() only, as for any 1.0 io plugin.
#ifndef FAULT_IO_ABI_MINOR
#define FAULT_IO_ABI_MINOR GLMRT_ABI_MINOR
#endif

const glmrt_plugin_descriptor kDescriptor = {
    sizeof(glmrt_plugin_descriptor),
    GLMRT_ABI_MAJOR,
    FAULT_IO_ABI_MINOR,
    GLMRT_PLUGIN_IO,
    FAULT_IO_ABI_MINOR == 0 ? "fault-io-1.0" : "fault-io",
    "1.1.0",
    "test plugin: pread with injected EIO, short reads and latency",
    &probe,
    &create,
};

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
