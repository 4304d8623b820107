#include <glmrt/base/error.h>
#include <glmrt/text/chunked_encoder.h>

#include <algorithm>
#include <initializer_list>

#include "utf8.h"

namespace glmrt::text {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool encodes_apart(const Tokenizer& tokenizer, std::string_view a, std::string_view b) {
  std::vector<TokenId> apart = tokenizer.encode(a);
  const std::vector<TokenId> second = tokenizer.encode(b);
  apart.insert(apart.end(), second.begin(), second.end());
  return apart == tokenizer.encode(std::string(a) + std::string(b));
}

// Every `a` with every `b`.
bool all_encode_apart(const Tokenizer& tokenizer, std::initializer_list<std::string_view> as,
                      std::initializer_list<std::string_view> bs) {
  for (const std::string_view a : as)
    for (const std::string_view b : bs)
      if (!encodes_apart(tokenizer, a, b)) return false;
  return true;
}

}  // namespace

TextCuts safe_cuts(const Tokenizer& tokenizer) {
  TextCuts cuts;
  cuts.after_line_break = all_encode_apart(
      tokenizer,
      {"x\n", "ab.\n", "x \n", "\n\n", "12\n", "x\r\n", "!!\n", "\n", "\xe4\xb8\xad\n", "x'\n"},
      {"a", "The", "1", ".", "'s", "<", "\xe4\xb8\xad", "\xc3\xa9t\xc3\xa9", "_x", "\xcc\x81"});
  cuts.before_space = all_encode_apart(tokenizer, {"x", "ab", "I", "1a", "\xc3\xa9t\xc3\xa9" "a"},
                                       {" a", " the", " A", " x1"});
  if (!cuts.after_line_break && !cuts.before_space) return cuts;
  // Special tokens: only the ones decode skips, which token_bytes refuses.
  for (TokenId id = 0; id < tokenizer.vocab_size(); ++id) {
    if (!tokenizer.is_special(id)) continue;
    const auto content = tokenizer.id_to_token(id);
    if (!content || content->empty()) continue;
    const std::string& t = *content;
    // A token spanning a cut, or stripping the space or line break beside it.
    if (t.find('\n') != std::string::npos || !encodes_apart(tokenizer, "x\n", t) ||
        !encodes_apart(tokenizer, t + "\n", "a"))
      cuts.after_line_break = false;
    if (t.find(' ') != std::string::npos || !encodes_apart(tokenizer, t, " a") ||
        (is_ascii_letter(t.front()) && !encodes_apart(tokenizer, "x", " " + t)))
      cuts.before_space = false;
  }
  return cuts;
}

ChunkedEncoder::ChunkedEncoder(const Tokenizer& tokenizer, bool add_special_tokens,
                               std::size_t chunk_bytes)
    : tokenizer_(tokenizer), cuts_(safe_cuts(tokenizer)), chunk_bytes_(chunk_bytes) {
  if (!add_special_tokens) return;
  // What the post-processor puts before and after a text, found around a
  // probe's ids; when they cannot be told apart the text is encoded whole.
  const std::vector<TokenId> plain = tokenizer.encode("x");
  const std::vector<TokenId> special = tokenizer.encode("x", true);
  const auto at = std::search(special.begin(), special.end(), plain.begin(), plain.end());
  const bool around =
      at != special.end() &&
      std::search(at + 1, special.end(), plain.begin(), plain.end()) == special.end() &&
      tokenizer.encode("", true).size() + plain.size() == special.size();
  if (!around) {
    cuts_ = {};
    special_whole_ = true;
    return;
  }
  prefix_.assign(special.begin(), at);
  suffix_.assign(at + static_cast<std::ptrdiff_t>(plain.size()), special.end());
}

std::size_t ChunkedEncoder::last_cut() const {
  const std::size_t lowest = std::max<std::size_t>(scanned_, 1);
  for (std::size_t p = pending_.size() - 1; p >= lowest; --p) {
    const char before = pending_[p - 1], at = pending_[p];
    if (cuts_.after_line_break && before == '\n' && !is_space(at)) return p;
    if (cuts_.before_space && at == ' ' && p + 1 < pending_.size() &&
        is_ascii_letter(pending_[p + 1]) && is_ascii_letter(before))
      return p;
  }
  return 0;
}

void ChunkedEncoder::encode_front(std::size_t bytes, std::vector<TokenId>& ids) {
  const std::string_view text = std::string_view(pending_).substr(0, bytes);
  if (const auto bad = utf8::first_invalid(text))
    fail("input text is not valid UTF-8 (byte offset {})", consumed_ + *bad);
  if (!started_) ids.insert(ids.end(), prefix_.begin(), prefix_.end());
  started_ = true;
  const std::vector<TokenId> encoded =
      special_whole_ ? tokenizer_.encode(text, true) : tokenizer_.encode(text);
  ids.insert(ids.end(), encoded.begin(), encoded.end());
  consumed_ += bytes;
  pending_.erase(0, bytes);
  // What followed the cut was scanned already (the cut is the last one).
  scanned_ = scanned_ > bytes ? scanned_ - bytes : 0;
}

void ChunkedEncoder::push(std::string_view bytes, std::vector<TokenId>& ids) {
  pending_.append(bytes);
  if (pending_.size() < chunk_bytes_ || pending_.size() < 2) return;
  const std::size_t cut = last_cut();
  // The bytes after the last byte looked at may complete a cut: the next
  // scan starts one before them.
  scanned_ = pending_.size() - 1;
  if (cut > 0) encode_front(cut, ids);
}

void ChunkedEncoder::finish(std::vector<TokenId>& ids) {
  if (!pending_.empty() || !started_) encode_front(pending_.size(), ids);
  if (!special_whole_) ids.insert(ids.end(), suffix_.begin(), suffix_.end());
}

}  // namespace glmrt::text
