#include <glmrt/serve/json_output.h>

namespace glmrt::serve {

std::shared_ptr<const grammar::TokenTrie> SharedTokenTrie::get() const {
  std::call_once(built_, [&] {
    trie_ = std::make_shared<const grammar::TokenTrie>(
        grammar::TokenTrie::from_tokenizer(tokenizer_, vocab_size_));
  });
  return trie_;
}

std::shared_ptr<TokenConstraint> json_constraint(
    const std::shared_ptr<const grammar::JsonSchema>& schema, const SharedTokenTrie& trie,
    std::span<const int32_t> stop_tokens) {
  if (!schema) return nullptr;
  return std::make_shared<grammar::JsonConstraint>(
      schema, trie.get(), std::vector<int32_t>(stop_tokens.begin(), stop_tokens.end()));
}

}  // namespace glmrt::serve
