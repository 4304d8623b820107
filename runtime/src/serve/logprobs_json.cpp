#include <glmrt/serve/logprobs_json.h>
#include <glmrt/serve/response_parts.h>

namespace glmrt::serve {
namespace {

Json utf8_bytes(const std::string& text) {
  Json bytes = Json::array();
  for (unsigned char c : text) bytes.push_back(c);
  return bytes;
}

}  // namespace

Json chat_logprob(const TokenScore& score, const text::Tokenizer& tokenizer) {
  const std::string text = token_text(tokenizer, score.token);
  Json top = Json::array();
  for (const TopLogprob& t : score.top) {
    const std::string alternative = token_text(tokenizer, t.token);
    top.push_back(
        {{"token", alternative}, {"logprob", t.logprob}, {"bytes", utf8_bytes(alternative)}});
  }
  return {{"token", text},
          {"logprob", score.logprob},
          {"bytes", utf8_bytes(text)},
          {"top_logprobs", std::move(top)}};
}

LegacyLogprobs::LegacyLogprobs(const text::Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

void LegacyLogprobs::add_unscored(int32_t token, int64_t text_offset) {
  tokens_.push_back(token_text(tokenizer_, token));
  logprobs_.emplace_back(nullptr);
  tops_.emplace_back(nullptr);
  offsets_.push_back(text_offset);
}

void LegacyLogprobs::add(const TokenScore& score, int64_t text_offset) {
  tokens_.push_back(token_text(tokenizer_, score.token));
  logprobs_.emplace_back(score.logprob);
  // A dict keyed by text: tokens that read the same keep the likelier one.
  Json top = Json::object();
  for (const TopLogprob& t : score.top) {
    const std::string text = token_text(tokenizer_, t.token);
    if (!top.contains(text)) top[text] = t.logprob;
  }
  tops_.push_back(std::move(top));
  offsets_.push_back(text_offset);
}

Json LegacyLogprobs::json(size_t from) const {
  Json tokens = Json::array(), logprobs = Json::array(), tops = Json::array(),
       offsets = Json::array();
  for (size_t i = from; i < tokens_.size(); ++i) {
    tokens.push_back(tokens_[i]);
    logprobs.push_back(logprobs_[i]);
    tops.push_back(tops_[i]);
    offsets.push_back(offsets_[i]);
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(logprobs)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

}  // namespace glmrt::serve
