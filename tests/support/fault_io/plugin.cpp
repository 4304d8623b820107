// Descriptor and factory of fault-io (built for the tests only, never installed).
#include "fault_io.h"

#include <plugin_entry.h>

#include <cstdio>

namespace {

namespace support = glmrt::plugin_support;
using glmrt::fault_io::FaultIo;
using glmrt::fault_io::FaultSettings;

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 0;
  std::snprintf(out->reason, sizeof(out->reason), "test plugin: pread with injected faults");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return support::create_plugin<glmrt::plugin::Io, FaultSettings>(
      FaultIo::kName, GLMRT_ABI_MINOR_ASYNC_IO, &glmrt::fault_io::parse_settings,
      support::construct<FaultIo>, host, settings, n_settings, error, error_len);
}

// FAULT_IO_ABI_MINOR=0 builds the copy that declares ABI 1.0: the host then
// calls read() only, as for any 1.0 io plugin; =4 the copy of ABI 1.4, whose
// reads the host never submits urgent nor cancels.
#ifndef FAULT_IO_ABI_MINOR
#define FAULT_IO_ABI_MINOR GLMRT_ABI_MINOR
#endif

constexpr glmrt_plugin_descriptor kDescriptor = support::plugin_descriptor(
    GLMRT_PLUGIN_IO,
    FAULT_IO_ABI_MINOR == 0   ? "fault-io-1.0"
    : FAULT_IO_ABI_MINOR == 4 ? "fault-io-1.4"
                              : "fault-io",
    "1.1.0", "test plugin: pread with injected EIO, short reads and latency", &probe, &create,
    FAULT_IO_ABI_MINOR);

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
