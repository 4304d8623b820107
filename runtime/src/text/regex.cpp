#include "regex.h"

#include <glmrt/base/error.h>

#include "utf8.h"

namespace glmrt::text {

namespace {

// The Unicode White_Space property, as PCRE2 class items.
constexpr std::string_view kWhiteSpaceItems =
    "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}";

struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

std::string translate_onig_pattern(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 64);
  int class_depth = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      ++i;
      if (next == 's') {
        if (class_depth > 0) {
          out.append(kWhiteSpaceItems);
        } else {
          out.append("[").append(kWhiteSpaceItems).append("]");
        }
      } else if (next == 'S' && class_depth == 0) {
        out.append("[^").append(kWhiteSpaceItems).append("]");
      } else {
        out.push_back('\\');
        out.push_back(next);
      }
      continue;
    }
    if (c == '[') {
      // A POSIX class such as [:alpha:] inside a class is copied whole.
      if (class_depth > 0 && i + 1 < pattern.size() && pattern[i + 1] == ':') {
        const auto close = pattern.find(":]", i + 2);
        if (close != std::string_view::npos) {
          out.append(pattern.substr(i, close + 2 - i));
          i = close + 1;
          continue;
        }
      }
      ++class_depth;
      out.push_back(c);
      // A ']' (after an optional '^') right at the start of a class is literal.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out.push_back(pattern[++i]);
      continue;
    }
    if (c == ']' && class_depth > 0) --class_depth;
    out.push_back(c);
  }
  return out;
}

std::string escape_literal(std::string_view literal) {
  std::string out;
  for (const char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}-/#").find(c) != std::string_view::npos)
      out.push_back('\\');
    if (c == '\0') {
      out.append("\\x{0}");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

Regex::Regex(std::string_view onig_pattern, std::string_view what) : what_(what) {
  const std::string pattern = translate_onig_pattern(onig_pattern);
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  // MULTILINE: in Oniguruma's Ruby syntax ^ and $ are line anchors.
  code_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                            PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &error_code, &error_offset,
                            nullptr));
  if (!code_)
    fail("{}: cannot compile regex '{}': {} at offset {}", what_, onig_pattern,
         pcre2_message(error_code), error_offset);
  // JIT is an optimisation only: without it the interpreter gives the same matches.
  pcre2_jit_compile(code_.get(), PCRE2_JIT_COMPLETE);
}

std::vector<Span> Regex::find_all(std::string_view text) const {
  std::vector<Span> matches;
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(
      pcre2_match_data_create_from_pattern(code_.get(), nullptr));
  if (!data) fail("{}: out of memory creating regex match data", what_);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t search_from = 0;
  std::size_t last_match_end = std::string_view::npos;
  while (search_from <= text.size()) {
    int rc = pcre2_match(code_.get(), subject, text.size(), search_from, PCRE2_NO_UTF_CHECK,
                         data.get(), nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(code_.get(), subject, text.size(), search_from,
                       PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) fail("{}: regex match failed: {}", what_, pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    const Span match{ovector[0], ovector[1]};
    if (match.begin == match.end && match.end == last_match_end) {
      // Oniguruma skips an empty match glued to the previous one.
      search_from +=
          search_from < text.size() ? utf8::decode_at(text, search_from).length : std::size_t{1};
      continue;
    }
    search_from = match.end;
    last_match_end = match.end;
    matches.push_back(match);
  }
  return matches;
}

}  // namespace glmrt::text
