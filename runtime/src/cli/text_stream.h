// Prints generated tokens as text the moment they complete a character:
// the streaming detokenizer holds back partial UTF-8, and every piece is
// flushed so a user (or a pipe) sees the answer grow token by token.
#pragma once

#include <glmrt/text/stream_detokenizer.h>
#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace glmrt::cli {

class TextStream {
 public:
  /// `tokenizer` must outlive the stream. Special tokens are printed (they
  /// show where reasoning ends, e.g. </think>).
  TextStream(const text::Tokenizer& tokenizer, std::FILE* out);

  /// Throws OutputError when the text cannot be written.
  void push(int32_t token);
  /// Prints whatever is held back; the next push starts a new text.
  void finish();

 private:
  void write(const std::string& piece);

  text::StreamDetokenizer detokenizer_;
  std::FILE* out_;
};

}  // namespace glmrt::cli
