// Input quoted in a message (an error, a warning, an access-log line) goes
// through printable(): a file name, a header or a token may hold terminal
// escape sequences, and printing them raw lets input rewrite the user's
// terminal. Header-only: the text library does not link the core.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace glmrt {

/// `text` with every control character (C0, DEL; invalid UTF-8 bytes too)
/// written as an escape: \n, \t, \r, \\ and \xHH; valid UTF-8 beyond ASCII
/// is kept. At most `limit` input bytes are shown, then "..." (0 = all).
inline std::string printable(std::string_view text, size_t limit = 0) {
  std::string out;
  const size_t n = limit && text.size() > limit ? limit : text.size();
  out.reserve(n + 8);
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // A whole, valid UTF-8 sequence is kept; anything else is escaped bytewise.
      const size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
      bool valid = len > 0 && i + len <= n;
      for (size_t k = 1; valid && k < len; ++k)
        valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      if (valid && len == 3) {
        const auto c1 = static_cast<unsigned char>(text[i + 1]);
        valid = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);  // overlong, surrogate
      }
      if (valid && len == 4) {
        const auto c1 = static_cast<unsigned char>(text[i + 1]);
        valid = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
      }
      // C1 controls (U+0080..U+009F) act as escapes on some terminals.
      if (valid && len == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)
        valid = false;
      if (!valid) {
        out += fmt::format("\\x{:02x}", c);
      } else {
        out.append(text.substr(i, len));
        i += len;
        continue;
      }
    }
    ++i;
  }
  if (n < text.size()) out += "...";
  return out;
}

}  // namespace glmrt
