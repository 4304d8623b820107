// The profile settings kernels-avx2 understands (plugins.kernels.settings).
#pragma once

#include <glmrt/plugin/abi.h>

#include <cstddef>
#include <string>

namespace glmrt::kernels_avx2 {

/// How integer weights meet the activations.
enum class ActivationMode {
  /// Quantize x rows to int8 (one scale per 32 inputs) once per call and use
  /// int8 dot products: fastest; adds the activation rounding error.
  kInt8,
  /// For ggml blocks: the int8 activations and, as a second int8 pass, what
  /// their rounding left (each block's residual quantized with its own
  /// scale), summed: about 250 times less activation error than kInt8 for
  /// twice the integer dot products, so near-tie router and DSA choices
  /// follow the weights rather than the rounding. glmrt's own integer
  /// formats take kInt8.
  kInt8Residual,
  /// Dequantize weights to f32 and use f32 FMAs: exact up to f32 rounding.
  kF32,
};

struct Settings {
  ActivationMode activations = ActivationMode::kInt8;
  /// `vnni: auto` (true): the int8 dots (int formats and ggml blocks) use
  /// AVX-VNNI's vpdpbusd where the CPU has it; `vnni: off`: AVX2's maddubs
  /// everywhere. The same bits.
  bool vnni_allowed = true;
  /// `avx512: auto` (true): with the AVX-VNNI path, where the CPU has AVX-512
  /// F/BW/VL/VNNI the lane kernels of products with many activation rows
  /// (prefill, batched steps) hold 16 weight rows per zmm instead of 8 per
  /// ymm; `avx512: off`: 8. The same bits.
  bool avx512_allowed = true;
  /// `pack: auto` (true): offer the host to pack resident rows of the types
  /// ggml_packed_rows.h packs (ABI 1.7; q4_0, and q4_k / q6_k with int8x2), where the AVX-VNNI
  /// kernels run with int8 activations; `pack: off`: rows stay as the file has them. The same bits.
  bool pack_allowed = true;
  /// `logits: int8` (true): the step's logits product (GLMRT_PRODUCT_LOGITS,
  /// ABI 1.8) takes one int8 pass over ggml blocks even with int8x2: only
  /// sampling reads it, and it is the step's largest product; `logits: same`
  /// (the default): as every product (docs/profiles.md has the trade).
  bool int8_logits = false;
};

/// Parses the settings; on an unknown key or bad value returns false and
/// sets `error` to a message naming the key and what is accepted.
bool parse_settings(const glmrt_setting* settings, size_t n_settings, Settings& out,
                    std::string& error);

}  // namespace glmrt::kernels_avx2
