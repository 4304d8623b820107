// Prints generated tokens as text the moment they complete a character:
// the streaming detokenizer holds back partial UTF-8, and every piece is
// flushed so a user (or a pipe) sees the answer grow token by token.
#pragma once

#include <glmrt/text/stream_detokenizer.h>
#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace glmrt::cli {

/// What a text stream shows of `tokens`, as one string.
std::string answer_text(const text::Tokenizer& tokenizer, std::span<const int32_t> tokens);

class TextStream {
 public:
  /// `tokenizer` must outlive the stream. Special tokens are left out (as
  /// transformers' decode(skip_special_tokens=True)) but for <think> and
  /// </think>, which show where reasoning ends.
  TextStream(const text::Tokenizer& tokenizer, std::FILE* out);
  /// The same text handed to `sink` piece by piece instead of printed.
  TextStream(const text::Tokenizer& tokenizer, std::function<void(const std::string&)> sink);

  /// Throws OutputError when the text cannot be written.
  void push(int32_t token);
  /// Prints whatever is held back; the next push starts a new text.
  void finish();

 private:
  void write(const std::string& piece);

  const text::Tokenizer& tokenizer_;
  std::vector<text::TokenId> kept_;  // special tokens printed all the same (sorted)
  text::StreamDetokenizer detokenizer_;
  std::function<void(const std::string&)> sink_;
};

}  // namespace glmrt::cli
