// Descriptor, probe and factory of kernels-avx2. Compiled without ISA flags:
// the probe must run (and say no) on CPUs that lack AVX2.
#include "avx2_kernels.h"
#include "settings.h"

#include <glmrt/plugin/plugin.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

namespace {

using glmrt::kernels_avx2::make_avx2_kernels;
using glmrt::kernels_avx2::parse_settings;

/// Higher than kernels-scalar, so `kernels: auto` prefers this plugin.
constexpr int32_t kScore = 20;

/// The instruction sets the SIMD sources are compiled for, missing on this CPU
/// ("" when all are present).
std::string missing_instruction_sets() {
  __builtin_cpu_init();
  std::string missing;
  if (!__builtin_cpu_supports("avx2")) missing += " avx2";
  if (!__builtin_cpu_supports("fma")) missing += " fma";
  if (!__builtin_cpu_supports("f16c")) missing += " f16c";
  return missing;
}

void write_message(char* out, size_t out_len, const std::string& message) {
  if (!out || out_len == 0) return;
  std::snprintf(out, out_len, "%s", message.c_str());
}

void probe(glmrt_probe_result* out) {
  if (!out) return;
  const std::string missing = missing_instruction_sets();
  out->supported = missing.empty() ? 1 : 0;
  out->score = missing.empty() ? kScore : 0;
  if (missing.empty())
    write_message(out->reason, sizeof(out->reason), "AVX2+FMA+F16C, int8 activation dot products");
  else
    write_message(out->reason, sizeof(out->reason), "this CPU lacks:" + missing);
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  try {
    if (!host || host->struct_size < sizeof(glmrt_host_services) || !host->alloc || !host->free) {
      write_message(error, error_len, "kernels-avx2: host services are missing alloc/free");
      return nullptr;
    }
    if (host->abi_major != GLMRT_ABI_MAJOR) {
      write_message(error, error_len, "kernels-avx2: host ABI major differs from the plugin's");
      return nullptr;
    }
    const std::string missing = missing_instruction_sets();
    if (!missing.empty()) {
      write_message(error, error_len, "kernels-avx2: this CPU lacks:" + missing);
      return nullptr;
    }
    std::string message;
    const auto parsed = parse_settings(settings, n_settings, message);
    if (!parsed) {
      write_message(error, error_len, "kernels-avx2: " + message);
      return nullptr;
    }
    return make_avx2_kernels(*host, *parsed).release();
  } catch (const std::exception& e) {
    write_message(error, error_len, std::string("kernels-avx2: ") + e.what());
  } catch (...) {
    write_message(error, error_len, "kernels-avx2: unknown error while creating");
  }
  return nullptr;
}

constexpr glmrt_plugin_descriptor kDescriptor = {
    sizeof(glmrt_plugin_descriptor),
    GLMRT_ABI_MAJOR,
    GLMRT_ABI_MINOR,
    GLMRT_PLUGIN_KERNELS,
    "kernels-avx2",
    "1.0.0",
    "AVX2/FMA matmuls for f32, bf16 and int8/int4/int2 (per-row or per-group scales); "
    "integer weights meet int8-quantized activations",
    &probe,
    &create,
};

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
