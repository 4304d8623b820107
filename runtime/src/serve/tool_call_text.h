// Scanning a model's tool-call text: markers between optional whitespace,
// and the text up to a closing marker. Shared by every family's parser.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

namespace glmrt::serve::tool_call_text {

inline constexpr std::string_view kSpace = " \t\r\n";

inline std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

/// Consumes `token` after optional whitespace; false (nothing consumed) when
/// the text does not continue with it.
inline bool take(std::string_view& rest, std::string_view token) {
  const std::string_view trimmed =
      rest.substr(std::min(rest.find_first_not_of(kSpace), rest.size()));
  if (!trimmed.starts_with(token)) return false;
  rest = trimmed.substr(token.size());
  return true;
}

/// The text up to `end` (consumed with it), or nothing when `end` never comes.
inline std::optional<std::string_view> until(std::string_view& rest, std::string_view end) {
  const size_t at = rest.find(end);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view before = rest.substr(0, at);
  rest.remove_prefix(at + end.size());
  return before;
}

/// The text after `begin` up to `end` (or to the text's end when the answer
/// was cut before it), trimmed; "{}" when `begin` never came or nothing
/// follows it: a cut call's JSON arguments as far as they were written.
inline std::string arguments_so_far(std::string_view held, std::string_view begin,
                                    std::string_view end) {
  const size_t at = held.find(begin);
  if (at == std::string_view::npos) return "{}";
  std::string_view rest = held.substr(at + begin.size());
  rest = trim(rest.substr(0, rest.find(end)));
  return rest.empty() ? std::string("{}") : std::string(rest);
}

/// Whether `text` is only whitespace.
inline bool blank(std::string_view text) {
  return text.find_first_not_of(kSpace) == std::string_view::npos;
}

}  // namespace glmrt::serve::tool_call_text
