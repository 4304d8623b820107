#include <glmrt/base/error.h>
#include <glmrt/generate/generator.h>

#include <algorithm>

namespace glmrt {

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::eos:
      return "eos";
    case StopReason::length:
      return "length";
    case StopReason::context_full:
      return "context full";
    case StopReason::cancelled:
      return "cancelled";
  }
  return "unknown";
}

namespace {

void check_limits(const GenerationLimits& limits) {
  if (limits.max_new_tokens < 0)
    fail("generate: max_new_tokens must be >= 0, got {}", limits.max_new_tokens);
  if (!std::is_sorted(limits.stop_tokens.begin(), limits.stop_tokens.end()))
    fail("generate: the stop tokens must be sorted ascending");
}

}  // namespace

Generation generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                    const GenerationLimits& limits, const TokenCallback& on_token) {
  check_limits(limits);
  if (limits.max_new_tokens == 0) return {};
  TokenLogitsCallback forward;
  if (on_token) forward = [&](int32_t token, std::span<const float>) { return on_token(token); };
  return continue_generation(session, sampler, prompt, session.set_context(prompt), limits,
                             forward);
}

Generation continue_generation(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                               std::vector<float> logits, const GenerationLimits& limits,
                               const TokenLogitsCallback& on_token) {
  check_limits(limits);
  Generation result;
  if (limits.max_new_tokens == 0) return result;

  const int64_t max_context = session.engine().profile().max_context;
  std::vector<int32_t> context(prompt.begin(), prompt.end());
  for (;;) {
    const int32_t token = sampler.sample(logits, context, result.tokens);
    if (std::binary_search(limits.stop_tokens.begin(), limits.stop_tokens.end(), token)) {
      result.reason = StopReason::eos;
      result.stop_token = token;
      return result;
    }
    result.tokens.push_back(token);
    context.push_back(token);
    if (on_token && !on_token(token, logits)) {
      result.reason = StopReason::cancelled;
      return result;
    }
    if (static_cast<int>(result.tokens.size()) >= limits.max_new_tokens) {
      result.reason = StopReason::length;
      return result;
    }
    // Decoding `token` stores it in the cache: one more row must fit.
    if (static_cast<int64_t>(session.tokens().size()) + 1 > max_context) {
      result.reason = StopReason::context_full;
      return result;
    }
    logits = session.append(token);
  }
}

}  // namespace glmrt
