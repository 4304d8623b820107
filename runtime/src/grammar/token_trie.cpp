#include <glmrt/base/error.h>
#include <glmrt/grammar/json_machine.h>
#include <glmrt/grammar/token_trie.h>

#include <algorithm>
#include <numeric>

namespace glmrt::grammar {

TokenTrie::TokenTrie(std::vector<std::optional<std::string>> bytes) : bytes_(std::move(bytes)) {
  if (bytes_.size() > static_cast<size_t>(INT32_MAX))
    fail("grammar: a vocabulary of {} tokens is too large", bytes_.size());
  std::vector<bool> spelled(bytes_.size()), unplain(bytes_.size());
  std::vector<std::pair<uint32_t, int32_t>> plain;
  for (size_t id = 0; id < bytes_.size(); ++id) {
    if (!bytes_[id] || bytes_[id]->empty()) continue;
    spelled[id] = true;
    if (const auto length = plain_string_length(*bytes_[id]))
      plain.push_back({*length, static_cast<int32_t>(id)});
    else
      unplain[id] = true;
  }
  all_ = build(spelled);
  unplain_ = build(unplain);
  std::sort(plain.begin(), plain.end());
  for (const auto& [length, id] : plain) {
    plain_lengths_.push_back(length);
    plain_ids_.push_back(id);
  }
}

TokenTrie::Trie TokenTrie::build(const std::vector<bool>& include) const {
  Trie trie;
  for (size_t id = 0; id < bytes_.size(); ++id)
    if (include[id]) trie.ids.push_back(static_cast<int32_t>(id));
  std::sort(trie.ids.begin(), trie.ids.end(), [&](int32_t a, int32_t b) {
    return *bytes_[a] < *bytes_[b] || (*bytes_[a] == *bytes_[b] && a < b);
  });
  // Sorted spellings build the preorder directly: the path of open nodes is
  // a stack, cut back to the common prefix with the previous spelling.
  std::vector<Node>& nodes = trie.nodes;
  nodes.push_back(Node{});
  std::vector<uint32_t> path{0};
  std::string_view previous;
  for (size_t i = 0; i < trie.ids.size(); ++i) {
    const std::string_view word = *bytes_[trie.ids[i]];
    const size_t common = static_cast<size_t>(
        std::mismatch(previous.begin(), previous.end(), word.begin(), word.end()).first -
        previous.begin());
    while (path.size() > common + 1) {
      nodes[path.back()].end = static_cast<uint32_t>(nodes.size());
      path.pop_back();
    }
    for (size_t d = common; d < word.size(); ++d) {
      Node node;
      node.byte = static_cast<uint8_t>(word[d]);
      node.tokens_begin = node.tokens_end = static_cast<uint32_t>(i);
      path.push_back(static_cast<uint32_t>(nodes.size()));
      nodes.push_back(node);
    }
    Node& last = nodes[path.back()];
    if (last.tokens_begin == last.tokens_end) last.tokens_begin = static_cast<uint32_t>(i);
    last.tokens_end = static_cast<uint32_t>(i + 1);
    previous = word;
  }
  while (!path.empty()) {
    nodes[path.back()].end = static_cast<uint32_t>(nodes.size());
    path.pop_back();
  }
  return trie;
}

TokenTrie TokenTrie::from_tokenizer(const text::Tokenizer& tokenizer, size_t vocab_size) {
  std::vector<std::optional<std::string>> bytes(std::max(vocab_size, tokenizer.vocab_size()));
  for (size_t id = 0; id < tokenizer.vocab_size(); ++id)
    bytes[id] = tokenizer.token_bytes(static_cast<text::TokenId>(id));
  bytes.resize(vocab_size);  // ids past the model's logits never come
  return TokenTrie(std::move(bytes));
}

std::optional<std::string_view> TokenTrie::bytes(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= bytes_.size() || !bytes_[id] || bytes_[id]->empty())
    return std::nullopt;
  return *bytes_[id];
}

uint64_t TokenTrie::memory_bytes() const {
  uint64_t bytes = bytes_.capacity() * sizeof(std::optional<std::string>);
  for (const auto& b : bytes_)
    if (b && b->capacity() > sizeof(std::string)) bytes += b->capacity();
  for (const Trie* t : {&all_, &unplain_})
    bytes += t->nodes.capacity() * sizeof(Node) + t->ids.capacity() * sizeof(int32_t);
  return bytes + plain_ids_.capacity() * sizeof(int32_t) +
         plain_lengths_.capacity() * sizeof(uint32_t);
}

}  // namespace glmrt::grammar
