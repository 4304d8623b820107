// Constrained JSON answers in serve: the vocabulary's trie, built the first
// time a request asks for JSON (a GLM-5 vocabulary takes a fraction of a
// second and ~20 MB, which a server that never sees response_format need not
// spend), and the constraint one choice samples under.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/grammar/json_constraint.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/serve/api_error.h>
#include <glmrt/serve/generation_request.h>
#include <glmrt/text/tokenizer.h>

#include <memory>
#include <mutex>
#include <span>

namespace glmrt::serve {

class SharedTokenTrie {
 public:
  /// `tokenizer` (and `budget`, when given) must outlive this; `vocab_size`
  /// is the model's logits.
  SharedTokenTrie(const text::Tokenizer& tokenizer, size_t vocab_size,
                  MemoryBudget* budget = nullptr)
      : tokenizer_(tokenizer), vocab_size_(vocab_size), budget_(budget) {}
  SharedTokenTrie(const SharedTokenTrie&) = delete;
  SharedTokenTrie& operator=(const SharedTokenTrie&) = delete;
  ~SharedTokenTrie();
  /// Built once, on the first call (from any thread), and charged to the
  /// budget as "JSON grammar trie" (throws when it does not fit; the next
  /// call tries again).
  std::shared_ptr<const grammar::TokenTrie> get() const;

 private:
  const text::Tokenizer& tokenizer_;
  size_t vocab_size_;
  MemoryBudget* budget_;
  mutable uint64_t charged_ = 0;
  mutable std::once_flag built_;
  mutable std::shared_ptr<const grammar::TokenTrie> trie_;
};

/// The constraint of one choice, or null when `schema` is (free text).
std::shared_ptr<TokenConstraint> json_constraint(
    const std::shared_ptr<const grammar::JsonSchema>& schema, const SharedTokenTrie& trie,
    std::span<const int32_t> stop_tokens);

/// 400 naming `logit_bias` when it bans every token `request`'s JSON format
/// allows as the answer's first: no answer could satisfy the request.
void refuse_unsatisfiable_start(const GenerationRequest& request, const SharedTokenTrie& trie);

/// The 400 for `e`, which ended an answer whose format and logit_bias left
/// no token to sample (later in the answer than refuse_unsatisfiable_start sees).
ApiError unsatisfiable_request(const UnsatisfiableConstraint& e);

}  // namespace glmrt::serve
