#include <glmrt/text/stream_detokenizer.h>

#include <algorithm>
#include <span>
#include <string_view>

namespace glmrt::text {

namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Ids held back at most, waiting for a character to complete (one spans at
// most four byte tokens, but tokens that each end inside a character can
// chain), and kept at most as context.
constexpr std::size_t kMaxHeldTokens = 16;

bool is_continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Where `after` starts to differ from `before`, moved back to the start of a
// character so what follows is valid UTF-8.
std::size_t first_difference(std::string_view before, std::string_view after) {
  const auto [stop, unused] =
      std::mismatch(before.begin(), before.end(), after.begin(), after.end());
  std::size_t at = static_cast<std::size_t>(stop - before.begin());
  while (at > 0 && at < after.size() && is_continuation_byte(after[at])) --at;
  return at;
}

}  // namespace

StreamDetokenizer::StreamDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}

std::string StreamDetokenizer::push(TokenId id) {
  window_.push_back(id);
  const std::span<const TokenId> all(window_);
  const std::string before = tokenizer_.decode(all.first(emitted_), skip_special_tokens_);
  const std::string after = tokenizer_.decode(all, skip_special_tokens_);
  // A trailing U+FFFD means the last character is still incomplete: wait. So
  // do ids that add no text (skipped special tokens). But every push decodes
  // all the held ids, so holding without bound would make a run of invalid
  // bytes, or of genuine U+FFFD, cost quadratic time: after kMaxHeldTokens
  // (far more than any character spans) the held text is settled as it is.
  const bool waiting =
      after.size() <= before.size() || std::string_view(after).ends_with(kReplacementCharacter);
  if (waiting && window_.size() - emitted_ < kMaxHeldTokens) return {};
  // `before` is a prefix of `after` but for one case: a byte-fallback run that
  // a later byte made invalid turns into U+FFFD as a whole, reaching back into
  // text already returned. That text cannot be taken back; return what differs.
  const std::size_t start = first_difference(before, after);
  if (start >= after.size()) {
    // The held ids added no text (unknown or skipped ones): drop them and
    // keep the context, which still ends with the last id that did.
    window_.resize(emitted_);
    return {};
  }
  std::string text = after.substr(start);
  // Keep the last emitted id as context for the next decode, with the ids
  // before it while they add no text of their own (unknown or skipped ids,
  // after which a decoder-less tokenizer's joining space would go missing) or
  // only part of a character (text starting with U+FFFD: a byte-fallback
  // decoder judges a run of byte tokens as a whole, so a context starting
  // mid-character would spoil the next bytes).
  std::size_t keep = 1;
  while (keep < std::min(window_.size(), kMaxHeldTokens)) {
    const std::string context = tokenizer_.decode(all.last(keep), skip_special_tokens_);
    if (!context.empty() && !context.starts_with(kReplacementCharacter)) break;
    ++keep;
  }
  window_.erase(window_.begin(), window_.end() - static_cast<std::ptrdiff_t>(keep));
  emitted_ = keep;
  return text;
}

std::string StreamDetokenizer::flush() {
  const std::span<const TokenId> all(window_);
  const std::string before = tokenizer_.decode(all.first(emitted_), skip_special_tokens_);
  const std::string after = tokenizer_.decode(all, skip_special_tokens_);
  window_.clear();
  emitted_ = 0;
  return after.size() > before.size() ? after.substr(first_difference(before, after))
                                      : std::string();
}

}  // namespace glmrt::text
