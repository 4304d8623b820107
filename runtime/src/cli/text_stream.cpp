#include "text_stream.h"

#include "output_error.h"

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
  // Checked at every piece, so generation stops as soon as the output is gone.
  write_output(out_, piece, "the generated text");
  flush_output(out_, "the generated text");
}

}  // namespace glmrt::cli
