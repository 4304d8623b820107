#include "text_stream.h"

#include "output_error.h"

#include <algorithm>

namespace glmrt::cli {

namespace {

constexpr std::string_view kKeptSpecialTokens[] = {"<think>", "</think>"};

bool shown(const text::Tokenizer& tokenizer, std::span<const text::TokenId> kept,
           text::TokenId id) {
  return !tokenizer.is_special(id) || std::binary_search(kept.begin(), kept.end(), id);
}

}  // namespace

std::string answer_text(const text::Tokenizer& tokenizer, std::span<const int32_t> tokens) {
  const std::vector<text::TokenId> kept = text::special_token_ids(tokenizer, kKeptSpecialTokens);
  std::vector<text::TokenId> ids;
  for (const int32_t token : tokens)
    if (shown(tokenizer, kept, static_cast<text::TokenId>(token)))
      ids.push_back(static_cast<text::TokenId>(token));
  return tokenizer.decode(ids);
}

TextStream::TextStream(const text::Tokenizer& tokenizer, std::FILE* out)
    : TextStream(tokenizer, [out](const std::string& piece) {
        // Checked at every piece, so generation stops as soon as the output is gone.
        write_output(out, piece, "the generated text");
        flush_output(out, "the generated text");
      }) {}

TextStream::TextStream(const text::Tokenizer& tokenizer,
                       std::function<void(const std::string&)> sink)
    : tokenizer_(tokenizer),
      kept_(text::special_token_ids(tokenizer, kKeptSpecialTokens)),
      detokenizer_(tokenizer),
      sink_(std::move(sink)) {}

void TextStream::push(int32_t token) {
  const auto id = static_cast<text::TokenId>(token);
  if (shown(tokenizer_, kept_, id)) write(detokenizer_.push(id));
}

void TextStream::finish() {
  write(detokenizer_.flush());
}

void TextStream::write(const std::string& piece) {
  sink_(piece);
}

}  // namespace glmrt::cli
