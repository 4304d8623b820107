#include <glmrt/serve/json_output.h>

namespace glmrt::serve {

namespace {
constexpr const char* kTrieCategory = "JSON grammar trie";
}

SharedTokenTrie::~SharedTokenTrie() {
  if (budget_ && charged_) budget_->release(kTrieCategory, charged_);
}

std::shared_ptr<const grammar::TokenTrie> SharedTokenTrie::get() const {
  std::call_once(built_, [&] {
    auto trie = std::make_shared<const grammar::TokenTrie>(
        grammar::TokenTrie::from_tokenizer(tokenizer_, vocab_size_));
    if (budget_) {
      budget_->charge(kTrieCategory, trie->memory_bytes());  // throws: built_ stays unset
      charged_ = trie->memory_bytes();
    }
    trie_ = std::move(trie);
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
