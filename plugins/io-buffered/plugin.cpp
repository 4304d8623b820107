// Descriptor and factory of io-buffered.
#include "buffered_io.h"
#include "create_io.h"

#include <glmrt/plugin/plugin.h>

#include <cstdio>

namespace {

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason), "POSIX pread through the page cache");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return glmrt::io_support::create_io<glmrt::io_buffered::BufferedIo>(
      &glmrt::io_buffered::parse_settings, host, settings, n_settings, error, error_len);
}

const glmrt_plugin_descriptor kDescriptor = {
    sizeof(glmrt_plugin_descriptor),
    GLMRT_ABI_MAJOR,
    GLMRT_ABI_MINOR,
    GLMRT_PLUGIN_IO,
    "io-buffered",
    "1.1.0",
    "asynchronous parallel pread through the page cache, posix_fadvise prefetch",
    &probe,
    &create,
};

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
