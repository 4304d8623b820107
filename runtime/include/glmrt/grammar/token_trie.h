// A vocabulary's token byte strings as one trie, so a walk that tests every
// token against a grammar state steps each shared prefix once. Nodes are in
// preorder: node i's children start at i + 1 and each child's subtree ends
// where its next sibling begins. Built once per tokenizer and shared by
// every constrained request.
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
  /// Every id below `vocab_size` (the model's logits; at least the
  /// tokenizer's size), with Tokenizer::token_bytes.
  static TokenTrie from_tokenizer(const text::Tokenizer& tokenizer, size_t vocab_size);

  std::span<const Node> nodes() const { return nodes_; }
  std::span<const int32_t> token_ids() const { return token_ids_; }
  size_t vocab_size() const { return bytes_.size(); }
  /// Token id's bytes; nothing when no text spells it.
  std::optional<std::string_view> bytes(int32_t id) const;

 private:
  std::vector<Node> nodes_;
  std::vector<int32_t> token_ids_;  // sorted by bytes
  std::vector<std::optional<std::string>> bytes_;
};

}  // namespace glmrt::grammar
