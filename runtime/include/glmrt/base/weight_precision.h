// The precision a weight matrix is stored at: its bits and, for the integer
// formats, how many inputs share one scale. Written "int4" (one scale per
// row, the seed program's form), "int4-g64" (one scale per 64 inputs of a
// row) or "int4-k32" (two-level: an int8 scale per 32 inputs relative to an
// f32 scale per 256, glmrt/plugin/weight_format.h); profiles, `glmrt convert`
// and the format stamp use the same names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt {

/// Element type of the latent KV and indexer key caches.
enum class CacheType { f32, bf16 };

/// Bits of a stored weight: 32 = f32, 16 = bf16, 8/4/3/2 = int8/int4/int3/int2
/// symmetric, value = q * scale.
enum class WeightBits : int { f32 = 32, bf16 = 16, int8 = 8, int4 = 4, int3 = 3, int2 = 2 };

struct WeightPrecision {
  WeightBits bits = WeightBits::f32;
  /// Inputs of a row sharing one f32 scale; 0 = one scale per row.
  uint32_t group = 0;
  /// Two-level scales: `group` is then 256 (one f32 scale per 256 inputs) and
  /// each smaller group of the bits' sub-group size has an int8 scale.
  bool two_level = false;
  /// `stored` in a profile: every weight kept in the type its file stores it
  /// in (a GGUF's ggml blocks, a container's packed codes, F32/BF16/F16 as
  /// they are); no element type of its own, the loader takes each tensor's.
  bool stored = false;

  WeightPrecision() = default;
  // Implicit: a bare WeightBits is the per-row format of those bits.
  WeightPrecision(WeightBits b, uint32_t g = 0) : bits(b), group(g) {}  // NOLINT
  /// The two-level format of int4, int3 or int2 ("int4-k32", "int3-k32", "int2-k16").
  static WeightPrecision two_level_of(WeightBits b);
  /// The profile precision `stored`.
  static WeightPrecision as_stored();
  bool operator==(const WeightPrecision&) const = default;
  bool quantized() const {
    return !stored && (bits == WeightBits::int8 || bits == WeightBits::int4 ||
                       bits == WeightBits::int3 || bits == WeightBits::int2);
  }
};

/// Smallest and largest group sizes accepted (multiples of 8, so every group
/// starts on a whole byte of packed values).
inline constexpr uint32_t kMinWeightGroup = 8;
inline constexpr uint32_t kMaxWeightGroup = 4096;

/// "f32", "bf16", "int8", "int4-g64", ..., "stored"
std::string precision_name(WeightPrecision p);
/// Parses a precision name (also "32"/"16"/"8"/"4"/"3"/"2"); nullopt with `why`
/// set when the text is no precision.
std::optional<WeightPrecision> parse_precision(std::string_view text, std::string* why = nullptr);
/// The same, throwing glmrt::Error "`what`: ..." naming the accepted forms.
WeightPrecision require_precision(std::string_view text, std::string_view what);
/// Bits per weight including scales, for a row of `cols` values.
double bits_per_weight(WeightPrecision p, int64_t cols);

/// The glmrt_element_type (glmrt/plugin/weight_format.h) a precision stores;
/// throws for `stored`, whose type is each tensor's own.
uint32_t weight_element_type(WeightPrecision p);

/// Every precision `glmrt convert --formats` lists: f32, bf16, each integer
/// bits per row, with the group sizes worth naming (32, 64, 128) and with
/// two-level scales.
std::vector<WeightPrecision> listed_precisions();

}  // namespace glmrt
