// Descriptor, probe and factory of the example AVX-512 kernels plugin. This
// file is compiled without AVX-512 flags, so the probe runs on any x86-64 CPU.
#include "avx512_kernels.h"

#include <glmrt/plugin/plugin.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

#ifdef KERNELS_AVX512_EMULATED
// The emulated build runs on any x86-64 and is slow: below every real
// kernels plugin, so `kernels: auto` never picks it.
constexpr int32_t kScore = 0;
constexpr const char* kName = "kernels-avx512-emulated";
constexpr const char* kDescription =
    "example third-party plugin, AVX-512 emulated with SIMDe: for checking results only";

constexpr const char* kSupportedAs = "AVX-512 emulated with SIMDe (slow)";

std::string missing_features() {
  return "";
}
bool has_vnni() {
  return true;
}
#else
/// Above kernels-avx2 (20): `kernels: auto` picks this plugin where it runs.
constexpr int32_t kScore = 30;
constexpr const char* kName = "kernels-avx512";
constexpr const char* kDescription =
    "example third-party plugin: AVX-512 f32 FMAs, VNNI int8/int4 dot products where present";

constexpr const char* kSupportedAs = "AVX-512";

/// AVX-512 subsets the kernels need that this CPU lacks ("" if none).
std::string missing_features() {
  __builtin_cpu_init();
  std::string missing;
  if (!__builtin_cpu_supports("avx512f")) missing += " avx512f";
  if (!__builtin_cpu_supports("avx512bw")) missing += " avx512bw";
  if (!__builtin_cpu_supports("avx512vl")) missing += " avx512vl";
  if (!__builtin_cpu_supports("fma")) missing += " fma";
  return missing;
}
bool has_vnni() {
  return __builtin_cpu_supports("avx512vnni");
}
#endif

void probe(glmrt_probe_result* out) {
  const std::string missing = missing_features();
  out->supported = missing.empty();
  out->score = missing.empty() ? kScore : 0;
  if (!missing.empty())
    std::snprintf(out->reason, sizeof(out->reason), "this CPU lacks AVX-512 (missing:%s)",
                  missing.c_str());
  else
    std::snprintf(out->reason, sizeof(out->reason), "%s%s", kSupportedAs,
                  has_vnni() ? " with VNNI int8 dot products" : "");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  auto refuse = [&](const std::string& message) -> void* {
    if (error && error_len) std::snprintf(error, error_len, "kernels-avx512: %s", message.c_str());
    return nullptr;
  };
  if (!host || host->struct_size < sizeof(glmrt_host_services) ||
      host->abi_major != GLMRT_ABI_MAJOR || !host->alloc || !host->parallel_for)
    return refuse("needs host services of ABI 1.x with alloc and parallel_for");
  if (!missing_features().empty()) return refuse("this CPU lacks AVX-512");
  avx512_example::Options options;
  options.use_vnni = has_vnni();
  for (size_t k = 0; k < n_settings; ++k) {
    const std::string key = settings[k].key ? settings[k].key : "";
    const std::string value = settings[k].value ? settings[k].value : "";
    if (key != "vnni") return refuse("unknown setting `" + key + "` (known: vnni)");
    if (value == "off") {
      options.use_vnni = false;
    } else if (value != "auto") {
      return refuse("setting `vnni`: expected `auto` or `off`, got `" + value + "`");
    }
  }
  glmrt::plugin::Kernels* kernels = avx512_example::make_avx512_kernels(*host, options);
  return kernels ? kernels : refuse("out of memory");
}

constexpr glmrt_plugin_descriptor kDescriptor = {
    sizeof(glmrt_plugin_descriptor),
    GLMRT_ABI_MAJOR,
    GLMRT_ABI_MINOR,
    GLMRT_PLUGIN_KERNELS,
    kName,
    "1.1.0",
    kDescription,
    &probe,
    &create,
};

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
