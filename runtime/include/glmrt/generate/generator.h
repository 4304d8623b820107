// The generation loop shared by `glmrt run`, `glmrt chat` and `validate`:
// prefill the prompt (reusing the session's cached prefix), then sample and
// decode — one token at a time, or a token and its drafts per step when the
// session drafts — until a stop token, the token limit, a full context or
// the caller cancels.
#pragma once

#include <glmrt/generate/session.h>
#include <glmrt/sampling/sampler.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace glmrt {

enum class StopReason {
  eos,           // a stop token was sampled (it is not part of the answer)
  length,        // max_new_tokens were generated
  context_full,  // the profile's memory.max_context was reached
  cancelled,     // the token callback asked to stop
};

std::string_view to_string(StopReason reason);

struct Generation {
  std::vector<int32_t> tokens;  // the answer, without the stop token
  StopReason reason = StopReason::length;
  int32_t stop_token = -1;  // the sampled stop token when reason == eos
};

/// Sees every answer token as soon as it is chosen (before the next decode
/// step); returning false stops generation after that token.
using TokenCallback = std::function<bool(int32_t token)>;

struct GenerationLimits {
  int max_new_tokens = 256;
  std::span<const int32_t> stop_tokens;  // sorted ascending (see stop_token_ids)
};

/// Makes the session's sequence `prompt` (Session::set_context) and generates
/// after it. The repetition penalty sees prompt + answer, the presence penalty
/// the answer only. When the session has a drafter (Session::speculator()),
/// each decode step verifies the drafts the cost model asks for in one batch
/// and takes the accepted ones: greedy output is the same token for token,
/// sampled output has the same distribution. On return the session holds the
/// prompt and every answer token except possibly the last (its logits were
/// never needed), so passing prompt + answer as the next prompt continues the
/// answer with a one-token prefill. With max_new_tokens = 0 nothing runs.
Generation generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                    const GenerationLimits& limits, const TokenCallback& on_token = {});

/// Sees every answer token with the logits it was drawn from (the model's,
/// before penalties and temperature), e.g. to report its log-probability;
/// the span is empty for a draft accepted by speculative decoding unless
/// every token's logits were asked for. Returning false stops generation
/// after that token.
using TokenLogitsCallback = std::function<bool(int32_t token, std::span<const float> logits)>;

/// Whether a TokenLogitsCallback needs the logits of every token: then the
/// session's drafter stays idle (one token per decode step).
enum class LogitsNeed { when_decoded, every_token };

/// The loop of generate() for a session that already holds `prompt`, with
/// `logits` its next-token logits (as Session::set_context returned them):
/// callers that ran the prompt themselves (to score it, say) go on from there.
Generation continue_generation(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                               std::vector<float> logits, const GenerationLimits& limits,
                               const TokenLogitsCallback& on_token = {},
                               LogitsNeed need = LogitsNeed::when_decoded);

}  // namespace glmrt
