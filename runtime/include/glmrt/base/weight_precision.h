// The precision a weight matrix is stored at: its bits and, for the integer
// formats, how many inputs share one scale. Written "int4" (one scale per
// row, the seed program's form) or "int4-g64" (one scale per 64 inputs of a
// row); profiles, `glmrt convert` and the format stamp use the same names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace glmrt {

/// Element type of the latent KV and indexer key caches.
enum class CacheType { f32, bf16 };

/// Bits of a stored weight: 32 = f32, 16 = bf16, 8/4/2 = int8/int4/int2
/// symmetric, value = q * scale.
enum class WeightBits : int { f32 = 32, bf16 = 16, int8 = 8, int4 = 4, int2 = 2 };

struct WeightPrecision {
  WeightBits bits = WeightBits::f32;
  /// Inputs of a row sharing one scale; 0 = one scale per row.
  uint32_t group = 0;

  WeightPrecision() = default;
  // Implicit: a bare WeightBits is the per-row format of those bits.
  WeightPrecision(WeightBits b, uint32_t g = 0) : bits(b), group(g) {}  // NOLINT
  bool operator==(const WeightPrecision&) const = default;
  bool quantized() const {
    return bits == WeightBits::int8 || bits == WeightBits::int4 || bits == WeightBits::int2;
  }
};

/// Smallest and largest group sizes accepted (multiples of 8, so every group
/// starts on a whole byte of packed values).
inline constexpr uint32_t kMinWeightGroup = 8;
inline constexpr uint32_t kMaxWeightGroup = 4096;

/// "f32", "bf16", "int8", "int4-g64", ...
std::string precision_name(WeightPrecision p);
/// Parses a precision name (also "32"/"16"/"8"/"4"/"2"); nullopt with `why`
/// set when the text is no precision.
std::optional<WeightPrecision> parse_precision(std::string_view text, std::string* why = nullptr);
/// The same, throwing glmrt::Error "`what`: ..." naming the accepted forms.
WeightPrecision require_precision(std::string_view text, std::string_view what);
/// Bits per weight including scales, for a row of `cols` values.
double bits_per_weight(WeightPrecision p, int64_t cols);

}  // namespace glmrt
