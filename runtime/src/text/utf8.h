// UTF-8 helpers shared by the text components: decoding one code point,
// validation, lossy repair (as Rust's String::from_utf8_lossy does it) and
// the Unicode character classes the Hugging Face library takes from Rust.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace glmrt::text::utf8 {

// Length of the sequence introduced by `lead`, 0 when `lead` cannot start one.
std::size_t sequence_length(unsigned char lead);

// The code point starting at `pos` (valid UTF-8 assumed) and its byte length.
struct Decoded {
  char32_t code_point;
  std::size_t length;
};
Decoded decode_at(std::string_view text, std::size_t pos);

void append(std::string& out, char32_t code_point);

// Byte offset of the first invalid sequence, or nullopt when `text` is valid.
std::optional<std::size_t> first_invalid(std::string_view text);

// Each maximal invalid subpart becomes U+FFFD (Unicode "substitution of
// maximal subparts", the behaviour of from_utf8_lossy).
std::string repair_lossy(std::string_view bytes);

// Length of an incomplete but so far valid sequence at the end of `text`
// (0 when the text ends on a character boundary).
std::size_t incomplete_tail_length(std::string_view text);

// Rust char::is_whitespace: the Unicode White_Space property.
bool is_white_space(char32_t c);
// Rust regex `\w`: Alphabetic, marks, decimal digits, connector punctuation,
// join controls (used for the single_word rule of added tokens).
bool is_word_char(char32_t c);
// Rust char::is_numeric: general categories Nd, Nl and No.
bool is_numeric(char32_t c);

}  // namespace glmrt::text::utf8
