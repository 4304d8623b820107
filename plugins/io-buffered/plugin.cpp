// Descriptor and factory of io-buffered.
#include "buffered_io.h"

#include <plugin_entry.h>

#include <cstdio>

namespace {

namespace support = glmrt::plugin_support;
using glmrt::io_buffered::BufferedIo;
using glmrt::io_support::IoSettings;

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason), "POSIX pread through the page cache");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return support::create_plugin<glmrt::plugin::Io, IoSettings>(
      BufferedIo::kName, GLMRT_ABI_MINOR_ASYNC_IO,
      &glmrt::io_support::parse_io_settings_of<BufferedIo>, support::construct<BufferedIo>, host,
      settings, n_settings, error, error_len);
}

constexpr glmrt_plugin_descriptor kDescriptor = support::plugin_descriptor(
    GLMRT_PLUGIN_IO, BufferedIo::kName, "1.1.0",
    "asynchronous parallel pread through the page cache, posix_fadvise prefetch", &probe, &create);

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
