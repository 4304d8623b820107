// Descriptor and factory of io-odirect.
#include "create_io.h"
#include "direct_io.h"

#include <glmrt/plugin/plugin.h>

#include <cstdio>

namespace {

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
  return glmrt::io_support::create_io<glmrt::io_odirect::DirectIo>(
      &glmrt::io_odirect::parse_settings, host, settings, n_settings, error, error_len);
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
