#include "token_id_list.h"

#include <glmrt/base/error.h>

#include <charconv>
#include <cstdint>
#include <limits>

namespace glmrt::cli {
namespace {

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return !s.empty();
}

}  // namespace

std::vector<int32_t> parse_token_id_list(std::string_view text, std::string_view flag) {
  constexpr std::string_view kExpected = "expected comma-separated token ids such as 1,2,3";
  if (trim_spaces(text).empty()) fail("{}: no token ids given ({})", flag, kExpected);
  std::vector<int32_t> ids;
  size_t position = 1;
  for (std::string_view rest = text;; ++position) {
    const size_t comma = rest.find(',');
    const std::string_view element = trim_spaces(rest.substr(0, comma));
    if (element.empty()) fail("{}: element {} is empty ({})", flag, position, kExpected);
    // from_chars alone would accept a leading '-'; ids are plain digits.
    int32_t id = 0;
    const auto [end, ec] = std::from_chars(element.data(), element.data() + element.size(), id);
    if (!all_digits(element) || ec != std::errc{} || end != element.data() + element.size())
      fail("{}: element {} (`{}`) is not a token id ({}: each a whole number from 0 to {})", flag,
           position, element, kExpected, std::numeric_limits<int32_t>::max());
    ids.push_back(id);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return ids;
}

}  // namespace glmrt::cli
