#include "text_stream.h"

#include <glmrt/base/error.h>

namespace glmrt::cli {

TextStream::TextStream(const text::Tokenizer& tokenizer, std::FILE* out)
    : detokenizer_(tokenizer), out_(out) {}

void TextStream::push(int32_t token) {
  write(detokenizer_.push(static_cast<text::TokenId>(token)));
}

void TextStream::finish() {
  write(detokenizer_.flush());
}

void TextStream::write(const std::string& piece) {
  if (!piece.empty() && std::fwrite(piece.data(), 1, piece.size(), out_) != piece.size())
    fail("cannot write the generated text to the output (closed pipe or full disk?)");
  std::fflush(out_);
}

}  // namespace glmrt::cli
