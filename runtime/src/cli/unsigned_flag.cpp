#include "unsigned_flag.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <charconv>
#include <limits>

namespace glmrt::cli {

uint64_t parse_unsigned_flag(std::string_view flag, std::string_view text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  // from_chars refuses a sign for unsigned types; a leading '-' gets its own word.
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (!text.empty() && ec == std::errc{} && stop == end) return value;
  const std::string_view why = !text.empty() && text.front() == '-' ? "negative, " : "";
  fail("{}: `{}` is {}not a whole number from 0 to {}", flag, printable(text, 64), why,
       std::numeric_limits<uint64_t>::max());
}

}  // namespace glmrt::cli
