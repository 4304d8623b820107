#include <glmrt/text/stream_detokenizer.h>

#include <span>
#include <string_view>

namespace glmrt::text {

namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

}  // namespace

StreamDetokenizer::StreamDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}

std::string StreamDetokenizer::push(TokenId id) {
  window_.push_back(id);
  const std::span<const TokenId> all(window_);
  const std::string before = tokenizer_.decode(all.first(emitted_), skip_special_tokens_);
  const std::string after = tokenizer_.decode(all, skip_special_tokens_);
  // A trailing U+FFFD means the last character is still incomplete: wait.
  if (after.size() <= before.size() || std::string_view(after).ends_with(kReplacementCharacter))
    return {};
  std::string text = after.substr(before.size());
  // Keep only the last emitted id as context for the next decode.
  window_.erase(window_.begin(), window_.end() - 1);
  emitted_ = 1;
  return text;
}

std::string StreamDetokenizer::flush() {
  const std::span<const TokenId> all(window_);
  const std::string before = tokenizer_.decode(all.first(emitted_), skip_special_tokens_);
  const std::string after = tokenizer_.decode(all, skip_special_tokens_);
  window_.clear();
  emitted_ = 0;
  return after.size() > before.size() ? after.substr(before.size()) : std::string();
}

}  // namespace glmrt::text
