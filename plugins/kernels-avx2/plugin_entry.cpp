// Descriptor, probe and factory of kernels-avx2. Compiled without ISA flags:
// the probe must run (and say no) on CPUs that lack AVX2.
#include "avx2_kernels.h"
#include "settings.h"

#include <plugin_entry.h>

#include <stdexcept>
#include <string>

namespace {

namespace support = glmrt::plugin_support;
using glmrt::kernels_avx2::Settings;
using support::write_message;

constexpr const char* kName = "kernels-avx2";

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

/// True where the int8 dots (glmrt's int formats and ggml blocks) may take
/// their AVX-VNNI builds (the 256-bit VEX vpdpbusd).
bool has_avx_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avxvnni");
}

/// True where the ggml lane kernels may run 16 rows per zmm (`avx512: auto`).
bool has_avx512_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

void probe(glmrt_probe_result* out) {
  if (!out) return;
  const std::string missing = missing_instruction_sets();
  out->supported = missing.empty() ? 1 : 0;
  out->score = missing.empty() ? kScore : 0;
  // Names the int8 dot paths `vnni: auto` and `avx512: auto` take on this CPU.
  if (missing.empty() && has_avx_vnni())
    write_message(out->reason, sizeof(out->reason),
                  std::string("AVX2+FMA+F16C, int8 activation dot products; int and ggml dots by "
                              "AVX-VNNI vpdpbusd (vnni: off for maddubs)") +
                      (has_avx512_vnni() ? "; ggml dots 16 or 2 rows per zmm (AVX-512 VNNI)" : ""));
  else if (missing.empty())
    write_message(out->reason, sizeof(out->reason),
                  "AVX2+FMA+F16C, int8 activation dot products; int and ggml dots by maddubs (no "
                  "AVX-VNNI)");
  else
    write_message(out->reason, sizeof(out->reason), "this CPU lacks:" + missing);
}

/// The object, on a CPU the probe accepts: it is compiled for AVX2, so it is
/// never built where it would fault.
glmrt::kernels_avx2::KernelsPtr make(const glmrt_host_services& host, const Settings& settings) {
  if (const std::string missing = missing_instruction_sets(); !missing.empty())
    throw std::runtime_error("this CPU lacks:" + missing);
  const bool vnni = settings.vnni_allowed && has_avx_vnni();
  return glmrt::kernels_avx2::make_avx2_kernels(
      host, settings, {vnni, vnni && settings.avx512_allowed && has_avx512_vnni()});
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return support::create_plugin<glmrt::plugin::Kernels, Settings>(
      kName, 0, &glmrt::kernels_avx2::parse_settings, &make, host, settings, n_settings, error,
      error_len);
}

constexpr glmrt_plugin_descriptor kDescriptor = support::plugin_descriptor(
    GLMRT_PLUGIN_KERNELS, kName, "1.0.0",
    "AVX2/FMA matmuls for f32, bf16, int8/int4/int3/int2 (per-row or per-group scales) and "
    "ggml's weight types; integer weights and ggml's q8_0, q2_k, q4_k, q6_k, iq2_xxs, iq4_xs "
    "meet int8-quantized activations",
    &probe, &create);

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
