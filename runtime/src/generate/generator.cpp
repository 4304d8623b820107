#include <glmrt/base/error.h>
#include <glmrt/generate/generator.h>
#include <glmrt/generate/speculator.h>

#include "answer.h"

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

/// Saves the engine's expert usage history when a generation ends, however
/// it ends (a crash later loses nothing this answer taught).
class HistorySaveAtEnd {
 public:
  explicit HistorySaveAtEnd(Engine& engine) : engine_(engine) {}
  HistorySaveAtEnd(const HistorySaveAtEnd&) = delete;
  HistorySaveAtEnd& operator=(const HistorySaveAtEnd&) = delete;
  ~HistorySaveAtEnd() { engine_.save_history(); }

 private:
  Engine& engine_;
};

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
                               const TokenLogitsCallback& on_token, LogitsNeed need) {
  const HistorySaveAtEnd save_history(session.engine());
  check_limits(limits);
  if (limits.max_new_tokens == 0) return {};

  const int64_t max_context = session.engine().profile().max_context;
  // Accepted drafts come without logits of their own: a caller that needs
  // every token's logits decodes one token per step.
  Speculator* speculator = need == LogitsNeed::every_token ? nullptr : session.speculator();
  Answer answer(prompt, limits, on_token, sampler);
  // The session never keeps more than prompt + answer: a step's rows past a
  // token that ended the answer go.
  const auto finish = [&]() -> Generation {
    const int64_t kept = static_cast<int64_t>(prompt.size() + answer.tokens().size());
    if (static_cast<int64_t>(session.tokens().size()) > kept) session.rollback_to(kept);
    return std::move(answer.result());
  };
  int32_t token = sampler.sample(logits, answer.context(), answer.tokens());
  for (;;) {
    if (!answer.take(token, logits)) return finish();
    // Decoding `token` stores it in the cache: one more row must fit.
    if (static_cast<int64_t>(session.tokens().size()) + 1 > max_context) {
      answer.result().reason = StopReason::context_full;
      return finish();
    }
    if (!speculator) {
      logits = session.append(token);
      token = sampler.sample(logits, answer.context(), answer.tokens());
      continue;
    }
    const SpeculativeStep step =
        speculator->step(token, sampler, answer.context(), answer.tokens(), answer.remaining());
    logits.clear();
    for (int32_t accepted : step.accepted)
      if (!answer.take(accepted, {})) return finish();
    // Every accepted draft was taken and the answer goes on, so the step
    // chose the token after them (it chooses none only at the token limit).
    if (step.next < 0) fail("generate: a speculative step decided no next token");
    token = step.next;
  }
}

}  // namespace glmrt
