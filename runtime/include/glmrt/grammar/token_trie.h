// A vocabulary's token byte strings as one trie, so a walk that tests every
// token against a grammar state steps each shared prefix once. Nodes are in
// preorder: node i's children start at i + 1 and each child's subtree ends
// where its next sibling begins. Built once per tokenizer and shared by
// every constrained request.
//
// Inside a JSON string nearly every token is allowed, and a walk of the
// whole trie would step every node (~330k for a 150k vocabulary, ~15 ms).
// So the tokens that are plain string text (printable ASCII but `"` and
// `\`, and whole UTF-8 characters) are also listed by their length in code
// points: in a string they are allowed exactly when that length fits, with
// no walk. A second trie holds the rest, walked as usual.
#pragma once

#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::grammar {

class TokenTrie {
 public:
  struct Node {
    uint32_t end = 0;                           // one past the last node of this subtree
    uint32_t tokens_begin = 0, tokens_end = 0;  // into token_ids(): tokens spelled by this node
    uint8_t byte = 0;                           // the byte from the parent to this node
  };

  /// `bytes[id]`: token id's bytes, or nothing for a token that no text
  /// spells (special, unknown); empty strings are left out too.
  explicit TokenTrie(std::vector<std::optional<std::string>> bytes);
  TokenTrie(TokenTrie&&) noexcept = default;
  TokenTrie& operator=(TokenTrie&&) noexcept = default;
  /// Every id below `vocab_size` (the model's logits; at least the
  /// tokenizer's size), with Tokenizer::token_bytes.
  static TokenTrie from_tokenizer(const text::Tokenizer& tokenizer, size_t vocab_size);

  std::span<const Node> nodes() const { return all_.nodes; }
  std::span<const int32_t> token_ids() const { return all_.ids; }
  /// The trie of the tokens that are not plain string text.
  std::span<const Node> string_nodes() const { return unplain_.nodes; }
  std::span<const int32_t> string_token_ids() const { return unplain_.ids; }
  /// Plain string tokens, shortest first, and their lengths in code points.
  std::span<const int32_t> plain_tokens() const { return plain_ids_; }
  std::span<const uint32_t> plain_lengths() const { return plain_lengths_; }
  size_t vocab_size() const { return bytes_.size(); }
  /// Token id's bytes; nothing when no text spells it.
  std::optional<std::string_view> bytes(int32_t id) const;
  /// The memory the trie holds (for the budget).
  uint64_t memory_bytes() const;

 private:
  struct Trie {
    std::vector<Node> nodes;
    std::vector<int32_t> ids;  // sorted by bytes
  };
  /// The trie of the tokens `include` picks.
  Trie build(const std::vector<bool>& include) const;

  std::vector<std::optional<std::string>> bytes_;
  Trie all_, unplain_;
  std::vector<int32_t> plain_ids_;
  std::vector<uint32_t> plain_lengths_;
};

}  // namespace glmrt::grammar
