// GPT-2's bytes_to_unicode table: every byte maps to a printable code point,
// so byte-level BPE vocabularies are plain UTF-8 strings.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace glmrt::text {

class ByteLevelAlphabet {
 public:
  ByteLevelAlphabet();

  // The UTF-8 spelling of the code point standing for `byte`.
  std::string_view symbol(unsigned char byte) const { return symbols_[byte]; }
  // Appends the byte-level spelling of every byte of `bytes`.
  void encode(std::string_view bytes, std::string& out) const;
  // The byte a code point stands for, if it is one of the 256 symbols.
  std::optional<unsigned char> byte_of(char32_t code_point) const;

 private:
  std::array<std::string, 256> symbols_;
  std::array<char32_t, 256> code_points_{};
  // Inverse map: code points 0..323 to byte + 1 (0 = not a symbol).
  std::array<unsigned short, 324> bytes_{};
};

// The one immutable table, shared by every component that needs it.
const ByteLevelAlphabet& byte_level_alphabet();

}  // namespace glmrt::text
