#include "byte_level.h"

#include "utf8.h"

namespace glmrt::text {

ByteLevelAlphabet::ByteLevelAlphabet() {
  // Printable Latin-1 bytes stand for themselves; the others take code
  // points 256, 257, ... in byte order (GPT-2 bytes_to_unicode).
  char32_t next_extra = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    code_points_[b] = printable ? static_cast<char32_t>(b) : next_extra++;
    utf8::append(symbols_[b], code_points_[b]);
    bytes_[code_points_[b]] = static_cast<unsigned short>(b + 1);
  }
}

void ByteLevelAlphabet::encode(std::string_view bytes, std::string& out) const {
  for (const char c : bytes) out.append(symbols_[static_cast<unsigned char>(c)]);
}

std::optional<unsigned char> ByteLevelAlphabet::byte_of(char32_t code_point) const {
  if (code_point >= bytes_.size() || bytes_[code_point] == 0) return std::nullopt;
  return static_cast<unsigned char>(bytes_[code_point] - 1);
}

const ByteLevelAlphabet& byte_level_alphabet() {
  static const ByteLevelAlphabet alphabet;  // immutable after construction
  return alphabet;
}

}  // namespace glmrt::text
