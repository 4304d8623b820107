#include "string_text.h"

namespace glmrt::grammar {
namespace {

int string_hex_digit(uint8_t b) {
  if (b >= '0' && b <= '9') return b - '0';
  if (b >= 'a' && b <= 'f') return b - 'a' + 10;
  if (b >= 'A' && b <= 'F') return b - 'A' + 10;
  return -1;
}

}  // namespace

// One byte of a JSON string's body (after its opening quote): valid UTF-8,
// no raw control characters, escapes (no lone surrogates), at most
// `max_length` code points and a closing quote only after `min_length`.
StringStep string_byte(Frame& f, uint8_t b, uint32_t min_length, uint32_t max_length) {
  if (f.pending > 0) {
    if (b < f.next_low || b > f.next_high) return StringStep::rejected;
    --f.pending;
    f.next_low = 0x80;
    f.next_high = 0xBF;
    return StringStep::more;
  }
  if (f.phase == kStringEscape) {
    if (b == 'u') {
      f.phase = kStringUnicode;
      f.fraction = 0;
      f.fraction_digits = 0;
      return StringStep::more;
    }
    if (b != '"' && b != '\\' && b != '/' && b != 'b' && b != 'f' && b != 'n' && b != 'r' &&
        b != 't')
      return StringStep::rejected;
    f.phase = kStringBody;
    return StringStep::more;
  }
  if (f.phase == kStringUnicode) {
    const int d = string_hex_digit(b);
    if (d < 0) return StringStep::rejected;
    f.fraction = f.fraction * 16 + d;
    // A surrogate (D800-DFFF) alone is not a character: refused, so every
    // answer parses in strict parsers (characters past U+FFFF go as UTF-8).
    if (++f.fraction_digits == 2 && f.fraction >= 0xD8 && f.fraction <= 0xDF)
      return StringStep::rejected;
    if (f.fraction_digits == 4) f.phase = kStringBody;
    return StringStep::more;
  }
  if (b == '"') return f.count >= min_length ? StringStep::closed : StringStep::rejected;
  if (b < 0x20) return StringStep::rejected;
  uint8_t pending = 0, low = 0x80, high = 0xBF;
  if (b < 0x80) {
    pending = 0;
  } else if (b >= 0xC2 && b <= 0xDF) {
    pending = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    pending = 2;
    if (b == 0xE0) low = 0xA0;   // no overlong forms
    if (b == 0xED) high = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    pending = 3;
    if (b == 0xF0) low = 0x90;
    if (b == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return StringStep::rejected;
  }
  if (f.count >= max_length) return StringStep::rejected;
  ++f.count;  // a character (or an escape) starts here
  if (b == '\\') f.phase = kStringEscape;
  f.pending = pending;
  f.next_low = low;
  f.next_high = high;
  return StringStep::more;
}

std::optional<uint32_t> plain_string_length(std::string_view bytes) {
  Frame f;
  for (const char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    if (b == '"' || b == '\\' || string_byte(f, b, 0, kNoLimit) != StringStep::more)
      return std::nullopt;
  }
  if (f.pending != 0) return std::nullopt;
  return f.count;
}

}  // namespace glmrt::grammar
