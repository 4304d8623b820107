// A Hugging Face tokenizer.json (byte-level BPE family) loaded into C++:
// encode text to ids and decode ids to text exactly as the `tokenizers`
// library does. See docs/tokenizer.md for what is supported.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace glmrt::text {

using TokenId = std::uint32_t;
class BpeModel;

// Bytes [begin, end) of a text.
struct ByteRange {
  std::size_t begin = 0, end = 0;
};

struct Encoding {
  std::vector<TokenId> ids;
  std::vector<std::string> tokens;  // vocabulary spellings, e.g. "Ġworld"
};

// A byte-level BPE tokenizer given as its parts rather than as a
// tokenizer.json: what a GGUF file stores (model_files/gguf_tokenizer.h).
// It encodes as the tokenizer.json with the same parts would: the added
// tokens matched whole in the raw text, then `nfc` normalization, then each
// `split_regexes` pattern splitting the pieces in turn (Oniguruma syntax,
// Isolated), then byte-level BPE; decoding is byte-level.
struct ByteLevelBpeParts {
  // Indexed by id, in byte-level spelling ("Ġworld"); nullopt where an id has
  // no token (never produced, skipped when decoding).
  std::vector<std::optional<std::string>> tokens;
  std::vector<std::pair<std::string, std::string>> merges;  // by rank
  struct Added {
    TokenId id;
    bool special;  // left out by decode(ids, skip_special_tokens = true)
  };
  std::vector<Added> added;  // their tokens are matched whole, before splitting
  std::vector<std::string> split_regexes;
  bool nfc = false;
  // What encode(text, add_special_tokens = true) puts around the text.
  std::optional<TokenId> prepend, append;
};

// Immutable after loading; encode/decode are safe to call from several
// threads at once (the per-word BPE cache has its own lock).
class Tokenizer {
 public:
  // Throws glmrt::Error naming the file and the field for anything malformed
  // or unsupported.
  static Tokenizer from_file(const std::filesystem::path& path);
  // `source` names the JSON in error messages.
  static Tokenizer from_json_text(std::string_view json_text, std::string_view source);
  // Throws glmrt::Error prefixed by `source` for parts that do not fit
  // together (a merge of tokens not in `tokens`, an added id without a token).
  static Tokenizer from_byte_level_bpe(const ByteLevelBpeParts& parts, std::string_view source);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // `text` must be valid UTF-8 (else glmrt::Error). add_special_tokens runs
  // the post_processor as the library's encode(text, add_special_tokens) does.
  std::vector<TokenId> encode(std::string_view text, bool add_special_tokens = false) const;
  Encoding encode_with_tokens(std::string_view text, bool add_special_tokens = false) const;
  // As encode(text), except that inside the `plain_text` ranges (sorted,
  // disjoint byte ranges of `text`) special tokens are not recognized: a
  // "<|user|>" there is tokenized as the characters it is made of, as the
  // library's split_special_tokens does. Chat prompts mark message content so
  // (a user cannot forge a turn); text outside the ranges encodes as encode().
  std::vector<TokenId> encode_with_plain_text(std::string_view text,
                                              std::span<const ByteRange> plain_text) const;

  // Unknown ids are skipped, as the library does. Always valid UTF-8.
  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens = false) const;

  // The bytes one token stands for, as a decode of it alone gives them but
  // without the UTF-8 repair (a token holding part of a character gives those
  // bytes); nothing for a special token or an unknown id. What constrained
  // decoding walks: exact for byte-level decoders, which see no context.
  std::optional<std::string> token_bytes(TokenId id) const;

  std::optional<TokenId> token_to_id(std::string_view token) const;
  // An added token marked "special" (what decode(ids, true) leaves out).
  bool is_special(TokenId id) const;
  std::optional<std::string> id_to_token(TokenId id) const;
  // One past the largest id in use.
  std::size_t vocab_size() const;

  // Empties the per-word BPE cache (benchmarks measure cold encoding).
  void clear_cache() const;

 private:
  struct Impl;
  // `model`, when given, stands for root's "model" (built from parts).
  static Tokenizer from_json_root(const nlohmann::json& root, std::string_view source,
                                  std::unique_ptr<BpeModel> model = nullptr);
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The ids of those `contents` that are special tokens of `tokenizer`, sorted
// (the markers an answer's parser reads, kept when special tokens are skipped).
std::vector<TokenId> special_token_ids(const Tokenizer& tokenizer,
                                       std::span<const std::string_view> contents);

}  // namespace glmrt::text
