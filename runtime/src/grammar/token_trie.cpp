#include <glmrt/base/error.h>
#include <glmrt/grammar/token_trie.h>

#include <algorithm>
#include <numeric>

namespace glmrt::grammar {

TokenTrie::TokenTrie(std::vector<std::optional<std::string>> bytes) : bytes_(std::move(bytes)) {
  if (bytes_.size() > static_cast<size_t>(INT32_MAX))
    fail("grammar: a vocabulary of {} tokens is too large", bytes_.size());
  for (size_t id = 0; id < bytes_.size(); ++id)
    if (bytes_[id] && !bytes_[id]->empty()) token_ids_.push_back(static_cast<int32_t>(id));
  std::sort(token_ids_.begin(), token_ids_.end(), [&](int32_t a, int32_t b) {
    return *bytes_[a] < *bytes_[b] || (*bytes_[a] == *bytes_[b] && a < b);
  });
  // Sorted spellings build the preorder directly: the path of open nodes is
  // a stack, cut back to the common prefix with the previous spelling.
  nodes_.push_back(Node{});
  std::vector<uint32_t> path{0};
  std::string_view previous;
  for (size_t i = 0; i < token_ids_.size(); ++i) {
    const std::string_view word = *bytes_[token_ids_[i]];
    const size_t common = static_cast<size_t>(
        std::mismatch(previous.begin(), previous.end(), word.begin(), word.end()).first -
        previous.begin());
    while (path.size() > common + 1) {
      nodes_[path.back()].end = static_cast<uint32_t>(nodes_.size());
      path.pop_back();
    }
    for (size_t d = common; d < word.size(); ++d) {
      Node node;
      node.byte = static_cast<uint8_t>(word[d]);
      node.tokens_begin = node.tokens_end = static_cast<uint32_t>(i);
      path.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(node);
    }
    Node& last = nodes_[path.back()];
    if (last.tokens_begin == last.tokens_end) last.tokens_begin = static_cast<uint32_t>(i);
    last.tokens_end = static_cast<uint32_t>(i + 1);
    previous = word;
  }
  while (!path.empty()) {
    nodes_[path.back()].end = static_cast<uint32_t>(nodes_.size());
    path.pop_back();
  }
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

}  // namespace glmrt::grammar
