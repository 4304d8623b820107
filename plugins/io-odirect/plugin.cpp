// Descriptor and factory of io-odirect.
#include "direct_io.h"

#include <plugin_entry.h>

#include <cstdio>

namespace {

namespace support = glmrt::plugin_support;
using glmrt::io_odirect::DirectIo;
using glmrt::io_support::IoSettings;

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
  return support::create_plugin<glmrt::plugin::Io, IoSettings>(
      DirectIo::kName, GLMRT_ABI_MINOR_ASYNC_IO, &glmrt::io_support::parse_io_settings_of<DirectIo>,
      support::construct<DirectIo>, host, settings, n_settings, error, error_len);
}

constexpr glmrt_plugin_descriptor kDescriptor = support::plugin_descriptor(
    GLMRT_PLUGIN_IO, DirectIo::kName, "1.0.0",
    "asynchronous O_DIRECT reads into the host's aligned buffers, several in flight", &probe,
    &create);

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
