#include <glmrt/base/error.h>
#include <glmrt/base/byte_size.h>

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

namespace glmrt {
namespace {

constexpr std::string_view kExpected =
    "expected 0 or a number with a unit B, KiB, MiB, GiB, TiB (1024-based) or KB, MB, GB, TB "
    "(1000-based), e.g. `20GiB`";

constexpr std::array<std::pair<std::string_view, double>, 9> kUnits{{
    {"B", 1.0},
    {"KiB", 1024.0},
    {"MiB", 1024.0 * 1024},
    {"GiB", 1024.0 * 1024 * 1024},
    {"TiB", 1024.0 * 1024 * 1024 * 1024},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

uint64_t parse_byte_size(std::string_view text) {
  std::string_view s = trim(text);
  if (s == "0") return 0;
  double number = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc{} || end == s.data() || !std::isfinite(number) || number < 0)
    fail("{}, found `{}`", kExpected, text);
  std::string_view unit = trim(std::string_view(end, s.data() + s.size() - end));
  if (unit.empty()) fail("{}, found `{}` (no unit)", kExpected, text);
  for (const auto& [name, multiplier] : kUnits) {
    if (unit != name) continue;
    double bytes = std::floor(number * multiplier);
    // 2^64 is exactly representable; anything at or above it does not fit.
    if (bytes >= 18446744073709551616.0) fail("size `{}` does not fit in 64 bits", text);
    return static_cast<uint64_t>(bytes);
  }
  fail("{}, found unknown unit `{}` in `{}`", kExpected, unit, text);
}

std::string format_byte_size(uint64_t bytes) {
  constexpr std::array<std::string_view, 5> kBinaryUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kBinaryUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  if (value == std::floor(value)) return fmt::format("{:.0f} {}", value, kBinaryUnits[unit]);
  return fmt::format("{:.2f} {}", value, kBinaryUnits[unit]);
}

}  // namespace glmrt
