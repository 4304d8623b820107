#include <glmrt/serve/json_output.h>

#include <algorithm>

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

void refuse_unsatisfiable_start(const GenerationRequest& request, const SharedTokenTrie& trie) {
  const auto& bias = request.sampling.logit_bias;
  const bool bans =
      std::any_of(bias.begin(), bias.end(), [](const auto& b) { return b.second <= -100; });
  if (!request.json_format || !bans) return;  // only a ban can leave nothing allowed
  grammar::JsonConstraint constraint(request.json_format, trie.get(), {});
  std::vector<uint8_t> left;
  const std::span<const uint8_t> allowed = constraint.allowed({});
  left.assign(allowed.begin(), allowed.end());
  for (const auto& [token, value] : bias)
    if (value <= -100 && token >= 0 && static_cast<size_t>(token) < left.size()) left[token] = 0;
  if (std::none_of(left.begin(), left.end(), [](uint8_t a) { return a != 0; }))
    bad_request("logit_bias",
                "the request cannot be satisfied: `logit_bias` bans every token `response_format` "
                "allows as the answer's first");
}

ApiError unsatisfiable_request(const UnsatisfiableConstraint& e) {
  return ApiError(400, "invalid_request_error",
                  fmt::format("the request cannot be satisfied: {}: `response_format` and "
                              "`logit_bias` contradict each other",
                              e.what()),
                  "logit_bias");
}

}  // namespace glmrt::serve
