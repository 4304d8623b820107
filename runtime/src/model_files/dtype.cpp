#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include <glmrt/base/error.h>
#include "dtype_conversion.h"

namespace glmrt {

namespace {

struct DTypeEntry {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeEntry, 13> kDTypes{{
    {DType::F32, "F32", 4},
    {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},
    {DType::F64, "F64", 8},
    {DType::I64, "I64", 8},
    {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},
    {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1},
    {DType::F8_E4M3, "F8_E4M3", 1},
    {DType::F8_E5M2, "F8_E5M2", 1},
    // Blocks of a ggml type: sizes come from the type (TensorInfo::ggml_type).
    {DType::GGML, "GGML", 1},
}};

const DTypeEntry& entry(DType d) {
  for (const auto& e : kDTypes) {
    if (e.dtype == d) return e;
  }
  fail("invalid DType value {}", static_cast<int>(d));
}

}  // namespace

std::string_view dtype_name(DType d) {
  return entry(d).name;
}
size_t dtype_size(DType d) {
  return entry(d).size;
}

namespace model_files {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host needs byte swapping");

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& e : kDTypes) {
    // GGML names no safetensors dtype: only a GGUF's tensors are GGML.
    if (e.name == name && e.dtype != DType::GGML) return e.dtype;
  }
  return std::nullopt;
}

std::string_view known_dtype_names() {
  return "F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL, F8_E4M3, F8_E5M2";
}

float bf16_to_f32(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

float f16_to_f32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exactly representable in f32.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {
    // Infinity (mantissa 0) or NaN, keeping the payload in the top mantissa bits.
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13));
}

bool converts_to_f32(DType d) {
  return d == DType::F32 || d == DType::BF16 || d == DType::F16 || d == DType::F64;
}

namespace {

template <typename Stored, typename Convert>
void convert_each(std::span<const std::byte> src, std::span<float> dst, Convert convert) {
  for (size_t i = 0; i < dst.size(); ++i) {
    Stored value;
    std::memcpy(&value, src.data() + i * sizeof(Stored), sizeof(Stored));
    dst[i] = convert(value);
  }
}

}  // namespace

void convert_to_f32(DType d, std::span<const std::byte> src, std::span<float> dst) {
  if (src.size() != dst.size() * dtype_size(d)) {
    fail("convert_to_f32: {} source bytes do not hold {} {} elements", src.size(), dst.size(),
         dtype_name(d));
  }
  switch (d) {
    case DType::F32:
      if (!dst.empty()) std::memcpy(dst.data(), src.data(), src.size());
      return;
    // Lambdas, not function pointers: the conversion is inlined into the
    // loop (which then vectorizes) instead of called per element.
    case DType::BF16:
      convert_each<uint16_t>(src, dst, [](uint16_t v) { return bf16_to_f32(v); });
      return;
    case DType::F16:
      convert_each<uint16_t>(src, dst, [](uint16_t v) { return f16_to_f32(v); });
      return;
    case DType::F64:
      convert_each<double>(src, dst, [](double v) { return static_cast<float>(v); });
      return;
    default:
      fail("convert_to_f32: {} has no conversion to f32", dtype_name(d));
  }
}

}  // namespace model_files
}  // namespace glmrt
