// The `added_tokens` of a tokenizer.json: strings matched whole in the input
// before normalization / pre-tokenization, with the single_word, lstrip,
// rstrip and normalized rules of the Hugging Face library.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <glmrt/text/tokenizer.h>

#include "bpe_model.h"
#include "component_json.h"
#include "normalizer.h"
#include "word_cache.h"

namespace glmrt::text {

struct AddedToken {
  std::string content;
  std::uint32_t id = 0;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
};

// Leftmost-longest matching of a set of strings (a byte trie).
class TokenMatcher {
 public:
  void add(std::string_view pattern, std::size_t value);
  struct Match {
    std::size_t begin, end, value;
  };
  // `accept` (when set) vetoes candidates: at each start the longest accepted
  // pattern matches, as if the vetoed ones were not in the set there.
  using Accept = std::function<bool(std::size_t begin, std::size_t end, std::size_t value)>;
  std::vector<Match> find_all(std::string_view text, const Accept& accept = {}) const;

 private:
  struct Node {
    std::unordered_map<unsigned char, std::uint32_t> children;
    std::optional<std::size_t> value;
  };
  std::vector<Node> nodes_{Node{}};
  std::array<bool, 256> first_byte_{};
};

class AddedVocabulary {
 public:
  using Id = std::uint32_t;

  // Ids follow the library: a content already in the model vocab takes that
  // id, any other the next id after the model's vocabulary size.
  AddedVocabulary(const Json& added_tokens, const BpeModel& model, const Normalizer* normalizer,
                  const JsonPath& where);

  // A stretch of normalized text to pre-tokenize, or one added token.
  struct Piece {
    std::string text;
    std::optional<Id> id;
    std::size_t offset = 0;  // where it starts in the text given to split (before normalizing)
  };
  // Special tokens are not matched where they overlap a `plain_text` range
  // (sorted byte ranges of `text`), as the library's split_special_tokens
  // does for the whole text; other added tokens match everywhere.
  std::vector<Piece> split(std::string_view text, const Normalizer* normalizer,
                           std::span<const ByteRange> plain_text = {}) const;

  const AddedToken* by_id(Id id) const;
  std::optional<Id> by_content(std::string_view content) const;
  // One past the largest added id (0 when there are none).
  Id end_id() const { return end_id_; }

 private:
  std::vector<Piece> find(std::string_view text, std::size_t offset, const TokenMatcher& matcher,
                          const TokenMatcher::Accept& accept) const;

  std::vector<AddedToken> tokens_;
  std::unordered_map<Id, std::size_t> index_by_id_;
  std::unordered_map<std::string, Id, StringHash, std::equal_to<>> id_by_content_;
  TokenMatcher raw_matcher_;         // tokens with normalized = false
  TokenMatcher normalized_matcher_;  // tokens with normalized = true, normalized contents
  Id end_id_ = 0;
};

}  // namespace glmrt::text
