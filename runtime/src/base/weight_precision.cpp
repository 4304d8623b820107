#include <glmrt/base/error.h>
#include <glmrt/base/weight_precision.h>
#include <glmrt/plugin/weight_format.h>

#include <charconv>

namespace glmrt {
namespace {

std::optional<WeightBits> parse_bits(std::string_view text) {
  if (text == "f32" || text == "32") return WeightBits::f32;
  if (text == "bf16" || text == "16") return WeightBits::bf16;
  if (text == "int8" || text == "8") return WeightBits::int8;
  if (text == "int4" || text == "4") return WeightBits::int4;
  if (text == "int3" || text == "3") return WeightBits::int3;
  if (text == "int2" || text == "2") return WeightBits::int2;
  return std::nullopt;
}

const char* bits_name(WeightBits bits) {
  switch (bits) {
    case WeightBits::f32:
      return "f32";
    case WeightBits::bf16:
      return "bf16";
    case WeightBits::int8:
      return "int8";
    case WeightBits::int4:
      return "int4";
    case WeightBits::int3:
      return "int3";
    case WeightBits::int2:
      return "int2";
  }
  return "?";
}

uint32_t element_type_of(WeightBits bits) {
  switch (bits) {
    case WeightBits::f32:
      return GLMRT_F32;
    case WeightBits::bf16:
      return GLMRT_BF16;
    case WeightBits::int8:
      return GLMRT_I8;
    case WeightBits::int4:
      return GLMRT_I4;
    case WeightBits::int3:
      return GLMRT_I3;
    case WeightBits::int2:
      return GLMRT_I2;
  }
  return GLMRT_F32;
}

/// Inputs sharing an int8 sub-scale in the two-level format of `bits` (0: none).
uint32_t sub_group_of(WeightBits bits) {
  switch (bits) {
    case WeightBits::int4:
      return static_cast<uint32_t>(plugin::two_level_group(GLMRT_I4K));
    case WeightBits::int3:
      return static_cast<uint32_t>(plugin::two_level_group(GLMRT_I3K));
    case WeightBits::int2:
      return static_cast<uint32_t>(plugin::two_level_group(GLMRT_I2K));
    default:
      return 0;
  }
}

}  // namespace

WeightPrecision WeightPrecision::two_level_of(WeightBits b) {
  if (sub_group_of(b) == 0) fail("{} has no two-level format", bits_name(b));
  WeightPrecision p(b, static_cast<uint32_t>(plugin::kTwoLevelBlock));
  p.two_level = true;
  return p;
}

WeightPrecision WeightPrecision::as_stored() {
  WeightPrecision p;
  p.stored = true;
  return p;
}

uint32_t weight_element_type(WeightPrecision p) {
  if (p.stored)
    fail(
        "precision `stored` keeps each weight in its file's type and has no element type of its "
        "own; give f32, bf16 or an integer precision here");
  if (!p.two_level) return element_type_of(p.bits);
  switch (p.bits) {
    case WeightBits::int4:
      return GLMRT_I4K;
    case WeightBits::int3:
      return GLMRT_I3K;
    default:
      return GLMRT_I2K;
  }
}

std::string precision_name(WeightPrecision p) {
  if (p.stored) return "stored";
  if (p.two_level) return fmt::format("{}-k{}", bits_name(p.bits), sub_group_of(p.bits));
  if (p.group == 0) return bits_name(p.bits);
  return fmt::format("{}-g{}", bits_name(p.bits), p.group);
}

namespace {

std::optional<WeightPrecision> parse_two_level(std::string_view text, WeightBits bits,
                                               std::string_view digits, std::string* why) {
  const uint32_t sub = sub_group_of(bits);
  uint32_t given = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), given);
  if (sub == 0 || ec != std::errc() || end != digits.data() + digits.size() || given != sub) {
    if (why)
      *why = fmt::format(
          "`{}`: the two-level formats are int4-k32, int3-k32 and int2-k16 (an int8 scale per 32 "
          "or 16 inputs, relative to an f32 scale per 256)",
          text);
    return std::nullopt;
  }
  return WeightPrecision::two_level_of(bits);
}

}  // namespace

std::optional<WeightPrecision> parse_precision(std::string_view text, std::string* why) {
  auto no = [&](std::string reason) -> std::optional<WeightPrecision> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (const size_t k = text.find("-k"); k != std::string_view::npos) {
    const auto bits = parse_bits(text.substr(0, k));
    if (!bits) return no(fmt::format("`{}` is not a precision", text));
    return parse_two_level(text, *bits, text.substr(k + 2), why);
  }
  const size_t dash = text.find("-g");
  const auto bits = parse_bits(text.substr(0, dash));
  if (!bits) return no(fmt::format("`{}` is not a precision", text));
  WeightPrecision p(*bits);
  if (dash == std::string_view::npos) return p;
  if (!p.quantized())
    return no(fmt::format("`{}`: only int8, int4, int3 and int2 take a group size", text));
  const std::string_view digits = text.substr(dash + 2);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), p.group);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return no(fmt::format("`{}`: the group size after -g is not a number", text));
  if (p.group < kMinWeightGroup || p.group > kMaxWeightGroup || p.group % 8 != 0)
    return no(fmt::format("`{}`: the group size must be a multiple of 8 from {} to {}", text,
                          kMinWeightGroup, kMaxWeightGroup));
  return p;
}

WeightPrecision require_precision(std::string_view text, std::string_view what) {
  std::string why;
  if (auto p = parse_precision(text, &why)) return *p;
  fail(
      "{}: {}; expected f32, bf16, int8, int4, int3 or int2 (one scale per row), "
      "int8/int4/int3/int2 with a group size such as int4-g64 (one scale per 64 inputs), or a "
      "two-level int4-k32, int3-k32 or int2-k16",
      what, why);
}

double bits_per_weight(WeightPrecision p, int64_t cols) {
  if (p.stored) fail("precision `stored` has no bits per weight of its own (each tensor's type)");
  const double bits = static_cast<double>(static_cast<int>(p.bits));
  if (!p.quantized() || cols <= 0) return bits;
  // The packed row's own bytes (int3 rows not a multiple of 8 wide round up).
  const int64_t row_bytes = plugin::packed_row_bytes(weight_element_type(p), cols);
  const int64_t scales = p.group ? (cols + p.group - 1) / p.group : 1;
  return (8.0 * static_cast<double>(row_bytes) + 32.0 * static_cast<double>(scales)) /
         static_cast<double>(cols);
}

std::vector<WeightPrecision> listed_precisions() {
  std::vector<WeightPrecision> list = {WeightBits::f32, WeightBits::bf16};
  for (WeightBits bits : {WeightBits::int8, WeightBits::int4, WeightBits::int3, WeightBits::int2}) {
    list.emplace_back(bits);
    for (uint32_t group : {32u, 64u, 128u}) list.emplace_back(bits, group);
    if (bits != WeightBits::int8) list.push_back(WeightPrecision::two_level_of(bits));
  }
  return list;
}

}  // namespace glmrt
