#include "utf8.h"

#include <unicode/uchar.h>

namespace glmrt::text::utf8 {

std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

Decoded decode_at(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const std::size_t length = sequence_length(lead);
  if (length <= 1 || pos + length > text.size()) return {lead, 1};
  char32_t cp = lead & (0xFF >> (length + 1));
  for (std::size_t i = 1; i < length; ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  return {cp, length};
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

namespace {

// Number of bytes from `pos` that form a valid prefix of a sequence (the
// "maximal subpart"), and whether that prefix is a complete character.
struct Prefix {
  std::size_t length;
  bool complete;
};

Prefix valid_prefix(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const std::size_t need = sequence_length(lead);
  if (need == 0) return {0, false};
  if (need == 1) return {1, true};
  std::size_t have = 1;
  for (; have < need && pos + have < text.size(); ++have) {
    const auto b = static_cast<unsigned char>(text[pos + have]);
    unsigned char lo = 0x80, hi = 0xBF;
    if (have == 1) {  // the second byte has tighter bounds for some leads
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    }
    if (b < lo || b > hi) return {have, false};
  }
  return {have, have == need};
}

}  // namespace

std::optional<std::size_t> first_invalid(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Prefix p = valid_prefix(text, pos);
    if (!p.complete) return pos;
    pos += p.length;
  }
  return std::nullopt;
}

std::string repair_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    if (static_cast<unsigned char>(bytes[pos]) < 0x80) {
      out.push_back(bytes[pos++]);
      continue;
    }
    const Prefix p = valid_prefix(bytes, pos);
    if (p.complete) {
      out.append(bytes.substr(pos, p.length));
      pos += p.length;
    } else {
      out.append("\xEF\xBF\xBD");
      pos += p.length == 0 ? 1 : p.length;
    }
  }
  return out;
}

std::size_t incomplete_tail_length(std::string_view text) {
  // A sequence is at most 4 bytes: look back for its lead byte.
  for (std::size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const std::size_t pos = text.size() - back;
    const auto b = static_cast<unsigned char>(text[pos]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking
    const Prefix p = valid_prefix(text, pos);
    return (!p.complete && p.length == back) ? back : 0;
  }
  return 0;
}

bool is_white_space(char32_t c) {
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE);
}

bool is_word_char(char32_t c) {
  const auto cp = static_cast<UChar32>(c);
  if (u_hasBinaryProperty(cp, UCHAR_ALPHABETIC) || u_hasBinaryProperty(cp, UCHAR_JOIN_CONTROL))
    return true;
  switch (u_charType(cp)) {
    case U_NON_SPACING_MARK:
    case U_COMBINING_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_DECIMAL_DIGIT_NUMBER:
    case U_CONNECTOR_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

bool is_numeric(char32_t c) {
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      return true;
    default:
      return false;
  }
}

}  // namespace glmrt::text::utf8
