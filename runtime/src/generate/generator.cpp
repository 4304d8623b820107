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

}  // namespace

Generation generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                    const GenerationLimits& limits, const TokenCallback& on_token) {
  const HistorySaveAtEnd save_history(session.engine());
  if (limits.max_new_tokens < 0)
    fail("generate: max_new_tokens must be >= 0, got {}", limits.max_new_tokens);
  if (!std::is_sorted(limits.stop_tokens.begin(), limits.stop_tokens.end()))
    fail("generate: the stop tokens must be sorted ascending");
  Generation result;
  if (limits.max_new_tokens == 0) return result;

  const int64_t max_context = session.engine().profile().max_context;
  std::vector<int32_t> context(prompt.begin(), prompt.end());
  auto logits = session.set_context(prompt);
  for (;;) {
    const int32_t token = sampler.sample(logits, context, result.tokens);
    if (std::binary_search(limits.stop_tokens.begin(), limits.stop_tokens.end(), token)) {
      result.reason = StopReason::eos;
      result.stop_token = token;
      return result;
    }
    result.tokens.push_back(token);
    context.push_back(token);
    if (on_token && !on_token(token)) {
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
