// Token log-probabilities in the two shapes OpenAI uses.
//   chat:   {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}]}
//   legacy: {"tokens": [...], "token_logprobs": [...], "top_logprobs": [{text: lp}],
//            "text_offset": [...]}   (the first prompt token's entries are null:
//            nothing predicts it)
// The numbers are TokenScores: log-softmax of the model's logits, the same
// ones `glmrt score` sums.
#pragma once

#include <glmrt/score/token_score.h>
#include <glmrt/text/tokenizer.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace glmrt::serve {

using Json = nlohmann::ordered_json;

/// One entry of a chat response's logprobs.content.
Json chat_logprob(const TokenScore& score, const text::Tokenizer& tokenizer);

/// A legacy logprobs object built token by token; slices serve streaming.
class LegacyLogprobs {
 public:
  /// `tokenizer` must outlive this.
  explicit LegacyLogprobs(const text::Tokenizer& tokenizer);

  /// A token nothing predicts (the first of an echoed prompt).
  void add_unscored(int32_t token, int64_t text_offset);
  void add(const TokenScore& score, int64_t text_offset);

  size_t size() const { return tokens_.size(); }
  /// Entries [from, size()).
  Json json(size_t from = 0) const;

 private:
  const text::Tokenizer& tokenizer_;
  std::vector<std::string> tokens_;
  std::vector<Json> logprobs_, tops_;
  std::vector<int64_t> offsets_;
};

}  // namespace glmrt::serve
