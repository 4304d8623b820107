#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_files/non_finite.h>

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
NonFiniteCount count_from_first(std::span<const std::byte> bytes, Bits exponent) {
  NonFiniteCount found;
  found.first = scan(bytes, exponent);
  if (found.first < 0) return found;
  const size_t n = bytes.size() / sizeof(Bits);
  for (size_t i = static_cast<size_t>(found.first); i < n; ++i)
    found.count += (load<Bits>(bytes.data() + i * sizeof(Bits)) & exponent) == exponent;
  return found;
}

template <typename Bits>
const char* kind(const FloatBits<Bits>& f, std::span<const std::byte> bytes, int64_t index) {
  const Bits v = load<Bits>(bytes.data() + index * sizeof(Bits));
  if ((v & f.exponent) != f.exponent) return "a finite value";
  if (v & f.mantissa) return "NaN";
  return (v & f.sign) ? "-Inf" : "+Inf";
}

/// `use(bits)` with the FloatBits of `dtype`; fails naming `caller` for a
/// dtype that is not a float type.
template <typename Use>
auto with_float_bits(DType dtype, const char* caller, Use&& use) {
  switch (dtype) {
    case DType::F32:
      return use(kF32);
    case DType::BF16:
      return use(kBf16);
    case DType::F16:
      return use(kF16);
    case DType::F64:
      return use(kF64);
    default:
      fail("{}: dtype {} is not a float type", caller, dtype_name(dtype));
  }
}

}  // namespace

int64_t find_non_finite(DType dtype, std::span<const std::byte> bytes) {
  return with_float_bits(dtype, "find_non_finite",
                         [&](const auto& f) { return scan(bytes, f.exponent); });
}

NonFiniteCount count_non_finite(DType dtype, std::span<const std::byte> bytes) {
  return with_float_bits(dtype, "count_non_finite",
                         [&](const auto& f) { return count_from_first(bytes, f.exponent); });
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
  return with_float_bits(dtype, "non_finite_kind",
                         [&](const auto& f) { return kind(f, bytes, index); });
}

// Quantizing would turn a NaN into 0 silently and f32 would carry it to the
// logits, where it says nothing about which tensor was broken.
void require_finite(const TensorDirectory& dir, const TensorInfo& t,
                    std::span<const std::byte> bytes, uint64_t first_element) {
  if (!is_float_dtype(t.dtype)) return;
  const int64_t at = find_non_finite(t.dtype, bytes);
  if (at < 0) return;
  const size_t size = dtype_size(t.dtype);
  float value = 0;
  decode_to_f32(t.dtype, bytes.subspan(static_cast<size_t>(at) * size, size), {&value, 1});
  const uint64_t index = first_element + static_cast<uint64_t>(at);
  const uint64_t cols = t.shape.size() == 2 ? static_cast<uint64_t>(t.shape[1]) : 0;
  const std::string where =
      cols ? fmt::format("[{}, {}]", index / cols, index % cols) : fmt::format("[{}]", index);
  fail(
      "tensor '{}' in {}: a value is not finite, {} at {}: weights must be finite numbers (the "
      "checkpoint is damaged or was converted with an overflow)",
      printable(t.name), dir.files().at(t.file_index), value, where);
}

}  // namespace glmrt
