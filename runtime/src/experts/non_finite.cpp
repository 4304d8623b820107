#include <glmrt/base/error.h>
#include <glmrt/experts/non_finite.h>

#include <algorithm>
#include <cstring>

namespace glmrt {
namespace {

/// Exponent bits of a float format, stored in an unsigned integer of its width.
template <typename Bits>
struct FloatBits {
  Bits exponent;
  Bits mantissa;
  Bits sign;
};

constexpr FloatBits<uint16_t> kBf16{0x7F80, 0x007F, 0x8000};
constexpr FloatBits<uint16_t> kF16{0x7C00, 0x03FF, 0x8000};
constexpr FloatBits<uint32_t> kF32{0x7F800000u, 0x007FFFFFu, 0x80000000u};
constexpr FloatBits<uint64_t> kF64{0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull,
                                   0x8000000000000000ull};

template <typename Bits>
Bits load(const std::byte* p) {
  Bits value;
  std::memcpy(&value, p, sizeof(Bits));
  return value;
}

template <typename Bits>
int64_t scan(std::span<const std::byte> bytes, Bits exponent) {
  const size_t n = bytes.size() / sizeof(Bits);
  const std::byte* data = bytes.data();
  // Blocks keep the early exit without a branch per element.
  constexpr size_t kBlock = 4096;
  for (size_t begin = 0; begin < n; begin += kBlock) {
    const size_t end = std::min(n, begin + kBlock);
    Bits bad = 0;
#pragma omp simd reduction(| : bad)
    for (size_t i = begin; i < end; ++i)
      bad |= static_cast<Bits>((load<Bits>(data + i * sizeof(Bits)) & exponent) == exponent);
    if (!bad) continue;
    for (size_t i = begin; i < end; ++i)
      if ((load<Bits>(data + i * sizeof(Bits)) & exponent) == exponent)
        return static_cast<int64_t>(i);
  }
  return -1;
}

template <typename Bits>
const char* kind(const FloatBits<Bits>& f, std::span<const std::byte> bytes, int64_t index) {
  const Bits v = load<Bits>(bytes.data() + index * sizeof(Bits));
  if ((v & f.exponent) != f.exponent) return "a finite value";
  if (v & f.mantissa) return "NaN";
  return (v & f.sign) ? "-Inf" : "+Inf";
}

}  // namespace

int64_t find_non_finite(DType dtype, std::span<const std::byte> bytes) {
  switch (dtype) {
    case DType::F32:
      return scan(bytes, kF32.exponent);
    case DType::BF16:
      return scan(bytes, kBf16.exponent);
    case DType::F16:
      return scan(bytes, kF16.exponent);
    case DType::F64:
      return scan(bytes, kF64.exponent);
    default:
      fail("find_non_finite: dtype {} is not a float type", dtype_name(dtype));
  }
}

int64_t decode_finite_to_f32(DType dtype, std::span<const std::byte> src, std::span<float> dst) {
  const size_t size = dtype_size(dtype);
  if (src.size() != dst.size() * size)
    fail("decode_finite_to_f32: {} bytes of {} for {} values", src.size(), dtype_name(dtype),
         dst.size());
  // 64 KiB of source: stays in L2 between the scan and the decode.
  const size_t chunk = (size_t{64} << 10) / size;
  for (size_t begin = 0; begin < dst.size(); begin += chunk) {
    const size_t n = std::min(chunk, dst.size() - begin);
    const auto bytes = src.subspan(begin * size, n * size);
    if (const int64_t bad = find_non_finite(dtype, bytes); bad >= 0)
      return static_cast<int64_t>(begin) + bad;
    decode_to_f32(dtype, bytes, dst.subspan(begin, n));
  }
  return -1;
}

const char* non_finite_kind(DType dtype, std::span<const std::byte> bytes, int64_t index) {
  switch (dtype) {
    case DType::F32:
      return kind(kF32, bytes, index);
    case DType::BF16:
      return kind(kBf16, bytes, index);
    case DType::F16:
      return kind(kF16, bytes, index);
    case DType::F64:
      return kind(kF64, bytes, index);
    default:
      fail("non_finite_kind: dtype {} is not a float type", dtype_name(dtype));
  }
}

}  // namespace glmrt
