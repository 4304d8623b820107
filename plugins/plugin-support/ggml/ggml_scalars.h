// The scalar encodings inside ggml's blocks, decoded to float exactly as
// ggml does: IEEE half (GGML_FP16_TO_FP32, ggml/src/ggml-impl.h
// ggml_compute_fp16_to_fp32), bfloat16 (ggml_compute_bf16_to_fp32) and the
// power-of-two scale E8M0 of MXFP4 (ggml_e8m0_to_fp32, ggml_e8m0_to_fp32_half).
// Bit-exact matters: a weight dequantized here must equal ggml's float for
// float, NaN payloads included, or reference checks against llama.cpp drift.
#pragma once

#include <bit>
#include <cstdint>

namespace glmrt::plugin_support::ggml {

/// IEEE binary16 to binary32: exact for every finite value, subnormals
/// included. ggml gets infinities and NaNs through a float multiply, which on
/// x86 keeps a NaN's payload and sets its quiet bit; so does this.
constexpr float fp16_to_f32(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  if (exponent == 0x1f) {
    const uint32_t quiet = mantissa != 0 ? 0x00400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// bfloat16 is the upper half of a binary32: no rounding, NaNs kept as they are.
constexpr float bf16_to_f32(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

/// E8M0 scale 2^(e - 127). e = 0 gives the subnormal 2^-127 and e = 255 gives
/// infinity: ggml does not treat 255 as NaN (its NaN branch is commented out).
constexpr float e8m0_to_f32(uint8_t e) {
  return std::bit_cast<float>(e == 0 ? 0x00400000u : static_cast<uint32_t>(e) << 23);
}

/// Half the E8M0 scale, 2^(e - 128): MXFP4's values are stored doubled
/// (kValuesMxfp4 holds 2 x E2M1), so ggml multiplies them by this. e = 0 and 1
/// give the subnormals 2^-128 and 2^-127; e = 255 gives 2^127, finite.
constexpr float e8m0_to_f32_half(uint8_t e) {
  return std::bit_cast<float>(e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23);
}

/// Little-endian loads from block bytes, which may sit at any address.
constexpr uint16_t load_le16(const uint8_t* bytes) {
  return static_cast<uint16_t>(bytes[0] | (bytes[1] << 8));
}
constexpr uint32_t load_le32(const uint8_t* bytes) {
  return static_cast<uint32_t>(bytes[0]) | (static_cast<uint32_t>(bytes[1]) << 8) |
         (static_cast<uint32_t>(bytes[2]) << 16) | (static_cast<uint32_t>(bytes[3]) << 24);
}

}  // namespace glmrt::plugin_support::ggml
