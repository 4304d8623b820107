// Descriptor and factory of kernels-scalar.
#include "scalar_kernels.h"

#include <plugin_entry.h>

#include <cstdio>
#include <memory>
#include <string>

namespace {

namespace support = glmrt::plugin_support;
using glmrt::kernels_scalar::ScalarKernels;

constexpr const char* kName = "kernels-scalar";

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason), "portable C++, runs on every CPU");
}

bool parse(const glmrt_setting* settings, size_t n_settings, support::NoSettings&,
           std::string& error) {
  return support::parse_no_settings(kName, settings, n_settings, error);
}

std::unique_ptr<ScalarKernels> make(const glmrt_host_services& host, support::NoSettings) {
  return std::make_unique<ScalarKernels>(host);
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return support::create_plugin<glmrt::plugin::Kernels, support::NoSettings>(
      kName, 0, &parse, &make, host, settings, n_settings, error, error_len);
}

constexpr glmrt_plugin_descriptor kDescriptor = support::plugin_descriptor(
    GLMRT_PLUGIN_KERNELS, kName, "1.0.0",
    "portable reference kernels: f32, bf16, int8/int4/int3/int2 with per-row or per-group "
    "scales, ggml's weight types",
    &probe, &create);

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
