// JSON Schema `format`s constrained decoding writes, as patterns over a
// string's characters: date (2024-05-31), time (13:05:09, optional fraction,
// Z or an offset), date-time (the two joined by T, as RFC 3339), uuid
// (8-4-4-4-12 hex digits), email (local@domain.tld) and ipv4 (four numbers
// 0-255). Each pattern is a position automaton (Glushkov's, no empty moves)
// of at most 63 positions, so the set of positions a prefix may be at is one
// 64-bit word a string frame carries; every position can still reach the
// end, so a prefix it admits never leads to a dead end.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace glmrt::grammar {

enum class StringFormat : uint8_t { none, date, date_time, time, uuid, email, ipv4 };

/// The format a schema names ("date-time", ...), or nothing for one not supported.
std::optional<StringFormat> string_format_named(std::string_view name);
/// The names string_format_named knows, for messages.
inline constexpr std::string_view kStringFormatNames = "date, date-time, time, uuid, email, ipv4";

class StringPattern {
 public:
  /// The positions after `byte`, from `state` (0: nothing read yet); 0 when
  /// the byte cannot come next.
  uint64_t step(uint64_t state, uint8_t byte) const;
  /// Whether text that led to `state` is a whole match.
  bool accepting(uint64_t state) const;
  /// Whether `text` matches as a whole.
  bool matches(std::string_view text) const;

  // Building (string_format.cpp): a fragment is the first and last
  // positions of a sub-pattern and whether it matches the empty text.
  struct Fragment {
    uint64_t first = 0, last = 0;
    bool nullable = false;
  };
  Fragment any_of(std::string_view bytes);  // one character of `bytes`
  Fragment range(char low, char high);      // one character in [low, high]
  Fragment literal(std::string_view text);
  Fragment then(Fragment a, Fragment b);
  static Fragment either(Fragment a, Fragment b);
  static Fragment optional(Fragment a);
  Fragment one_or_more(Fragment a);
  void finish(Fragment whole) { whole_ = whole; }

 private:
  Fragment position(const std::array<uint64_t, 4>& bytes);

  std::vector<std::array<uint64_t, 4>> classes_;  // per position: the bytes it takes
  std::vector<uint64_t> follow_;                  // per position: the positions after it
  Fragment whole_;
};

/// The pattern of `format` (not none).
const StringPattern& string_pattern(StringFormat format);

}  // namespace glmrt::grammar
