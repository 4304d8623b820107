// The answer of one generation as it is taken token by token (generate()
// and BatchGeneration): stop tokens, the callback, a finished constraint
// and the token limit end it.
#pragma once

#include <glmrt/generate/generator.h>
#include <glmrt/sampling/sampler.h>

#include <algorithm>
#include <span>
#include <vector>

namespace glmrt {

/// The answer as it is taken token by token: stop tokens, the callback and
/// the token limit end it.
class Answer {
 public:
  Answer(std::span<const int32_t> prompt, const GenerationLimits& limits,
         const TokenLogitsCallback& on_token, const Sampler& sampler)
      : context_(prompt.begin(), prompt.end()),
        limits_(limits),
        on_token_(on_token),
        sampler_(sampler) {}

  /// Takes the next decided token, drawn from `logits` (empty for an
  /// accepted draft); false when the answer ends with it.
  bool take(int32_t token, std::span<const float> logits) {
    if (std::binary_search(limits_.stop_tokens.begin(), limits_.stop_tokens.end(), token)) {
      result_.reason = StopReason::eos;
      result_.stop_token = token;
      return false;
    }
    result_.tokens.push_back(token);
    context_.push_back(token);
    if (on_token_ && !on_token_(token, logits)) {
      result_.reason = StopReason::cancelled;
      return false;
    }
    // A constrained answer that is finished (the JSON closed) ends as if a
    // stop token came next: the constraint would allow nothing else.
    if (sampler_.finished(result_.tokens)) {
      result_.reason = StopReason::eos;
      return false;
    }
    if (remaining() == 0) {
      result_.reason = StopReason::length;
      return false;
    }
    return true;
  }
  int remaining() const { return limits_.max_new_tokens - static_cast<int>(result_.tokens.size()); }
  /// Every token so far (the repetition penalty's view).
  const std::vector<int32_t>& context() const { return context_; }
  /// The answer so far (the presence penalty's view).
  const std::vector<int32_t>& tokens() const { return result_.tokens; }
  Generation& result() { return result_; }

 private:
  std::vector<int32_t> context_;
  const GenerationLimits& limits_;
  const TokenLogitsCallback& on_token_;
  const Sampler& sampler_;
  Generation result_;
};

}  // namespace glmrt
