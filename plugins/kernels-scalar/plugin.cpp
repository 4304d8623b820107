// Descriptor and factory of kernels-scalar.
#include "scalar_kernels.h"

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
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason), "portable C++, runs on every CPU");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  try {
    if (!host || host->struct_size < sizeof(glmrt_host_services) ||
        host->abi_major != GLMRT_ABI_MAJOR) {
      write_error(error, error_len, "kernels-scalar needs host services of ABI 1.x");
      return nullptr;
    }
    if (n_settings > 0) {
      write_error(error, error_len,
                  std::string("kernels-scalar takes no settings; unknown setting `") +
                      (settings[0].key ? settings[0].key : "") + "`");
      return nullptr;
    }
    auto kernels = std::make_unique<glmrt::kernels_scalar::ScalarKernels>(*host);
    return static_cast<glmrt::plugin::Kernels*>(kernels.release());
  } catch (const std::exception& e) {
    write_error(error, error_len, std::string("kernels-scalar: ") + e.what());
    return nullptr;
  }
}

const glmrt_plugin_descriptor kDescriptor = {
    sizeof(glmrt_plugin_descriptor),
    GLMRT_ABI_MAJOR,
    GLMRT_ABI_MINOR,
    GLMRT_PLUGIN_KERNELS,
    "kernels-scalar",
    "1.0.0",
    "portable reference kernels: f32, bf16, int8/int4/int2 with per-row or per-group scales",
    &probe,
    &create,
};

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
