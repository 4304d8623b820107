#include <glmrt/base/error.h>
#include <glmrt/base/weight_precision.h>

#include <charconv>

namespace glmrt {
namespace {

std::optional<WeightBits> parse_bits(std::string_view text) {
  if (text == "f32" || text == "32") return WeightBits::f32;
  if (text == "bf16" || text == "16") return WeightBits::bf16;
  if (text == "int8" || text == "8") return WeightBits::int8;
  if (text == "int4" || text == "4") return WeightBits::int4;
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
    case WeightBits::int2:
      return "int2";
  }
  return "?";
}

}  // namespace

std::string precision_name(WeightPrecision p) {
  if (p.group == 0) return bits_name(p.bits);
  return fmt::format("{}-g{}", bits_name(p.bits), p.group);
}

std::optional<WeightPrecision> parse_precision(std::string_view text, std::string* why) {
  auto no = [&](std::string reason) -> std::optional<WeightPrecision> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const size_t dash = text.find("-g");
  const auto bits = parse_bits(text.substr(0, dash));
  if (!bits) return no(fmt::format("`{}` is not a precision", text));
  WeightPrecision p(*bits);
  if (dash == std::string_view::npos) return p;
  if (!p.quantized())
    return no(fmt::format("`{}`: only int8, int4 and int2 take a group size", text));
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
      "{}: {}; expected f32, bf16, int8, int4 or int2 (one scale per row), or int8/int4/int2 "
      "with a group size such as int4-g64 (one scale per 64 inputs)",
      what, why);
}

double bits_per_weight(WeightPrecision p, int64_t cols) {
  const double bits = static_cast<double>(static_cast<int>(p.bits));
  if (!p.quantized() || cols <= 0) return bits;
  const int64_t scales = p.group ? (cols + p.group - 1) / p.group : 1;
  return bits + 32.0 * static_cast<double>(scales) / static_cast<double>(cols);
}

}  // namespace glmrt
