// A compiled PCRE2 regex (UTF + UCP, JIT) standing in for the Oniguruma
// regexes of Hugging Face tokenizer.json files. The pattern is translated
// where the two engines differ (see translate_onig_pattern), and matches are
// enumerated the way the `onig` crate's find_iter does.
#pragma once

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::text {

struct Span {
  std::size_t begin;
  std::size_t end;
};

// Oniguruma's `\s` is the White_Space property; PCRE2's (with UCP) also takes
// U+180E. The translation spells `\s`/`\S` out as explicit classes.
std::string translate_onig_pattern(std::string_view pattern);

// Regex-escapes a literal so that it can be compiled as a pattern.
std::string escape_literal(std::string_view literal);

class Regex {
 public:
  // `what` names the pattern's origin for error messages.
  Regex(std::string_view onig_pattern, std::string_view what);

  // Every non-overlapping match in `text` (valid UTF-8), left to right. An
  // empty match right after the previous match is skipped and the search
  // moves on one character, as Oniguruma's find_iter does. Thread-safe.
  std::vector<Span> find_all(std::string_view text) const;

 private:
  struct CodeDeleter {
    void operator()(pcre2_code* code) const { pcre2_code_free(code); }
  };
  std::unique_ptr<pcre2_code, CodeDeleter> code_;
  std::string what_;
};

}  // namespace glmrt::text
