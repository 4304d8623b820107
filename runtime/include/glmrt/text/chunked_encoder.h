// Encodes a text that arrives piece by piece, a bounded stretch at a time,
// to exactly the ids encoding it whole gives: `glmrt tokenize` of 50 MB held
// the whole text and every word of it at once (2.3 GB).
#pragma once

#include <glmrt/text/tokenizer.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::text {

/// Bytes of text encoded at once: the encoder's own memory is a small
/// multiple of this (the pre-tokenizer's words, the ids), whatever the text.
inline constexpr std::size_t kTextChunkBytes = std::size_t{256} << 10;

/// Where a text may be cut so that its two sides encode apart to the ids of
/// the whole: after a line break before a character that is not
/// whitespace, and between an ASCII letter and a space before a letter. The
/// byte-level BPE pre-tokenizers (GLM, DeepSeek, Qwen, GPT-2/4) split words
/// there anyway; each kind of cut is used only when the tokenizer is seen to
/// split there (probes of both sides encoded apart and whole, every added
/// token included), so a tokenizer that prepends, strips or prefixes spaces
/// per piece is never cut.
struct TextCuts {
  bool after_line_break = false;
  bool before_space = false;
};
TextCuts safe_cuts(const Tokenizer& tokenizer);

class ChunkedEncoder {
 public:
  /// `tokenizer` must outlive the encoder. With `add_special_tokens`, the ids
  /// the post-processor puts around a text come first and at finish().
  ChunkedEncoder(const Tokenizer& tokenizer, bool add_special_tokens,
                 std::size_t chunk_bytes = kTextChunkBytes);

  /// Takes the next bytes of the text; appends to `ids` the ids of the text
  /// now known complete (none until a chunk's worth and a cut are there).
  void push(std::string_view bytes, std::vector<TokenId>& ids);
  /// Appends the ids of the rest of the text.
  void finish(std::vector<TokenId>& ids);

  /// Bytes held back, waiting for a cut.
  std::size_t pending_bytes() const { return pending_.size(); }

 private:
  std::size_t last_cut() const;
  void encode_front(std::size_t bytes, std::vector<TokenId>& ids);

  const Tokenizer& tokenizer_;
  TextCuts cuts_;
  std::size_t chunk_bytes_;
  std::vector<TokenId> prefix_, suffix_;  // what add_special_tokens puts around the text
  bool special_whole_ = false;            // the post-processor's ids not found: encoded whole
  bool started_ = false;
  std::string pending_;
  std::size_t scanned_ = 0;   // pending_ before this holds no cut
  std::size_t consumed_ = 0;  // bytes of the text encoded, for error offsets
};

}  // namespace glmrt::text
