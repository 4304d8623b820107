// One assistant turn of a chat request on the model thread, whatever API
// asked for it (/v1/chat/completions, /v1/messages, /v1/responses): the
// prompt run through the session (its cached prefix reused), the answer
// generated and split into reasoning, content and tool calls (a forced
// call the model did not finish is still that call). Each API only shapes
// what this reports into its own events and bodies.
#pragma once

#include <glmrt/serve/chat_request.h>
#include <glmrt/serve/job.h>
#include <glmrt/serve/model_worker.h>
#include <glmrt/serve/reasoning_splitter.h>
#include <glmrt/serve/response_parts.h>
#include <glmrt/serve/tool_calls.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace glmrt::serve {

struct ChatTurn {
  std::string reasoning, content;  // the whole answer (calls' text is not content)
  std::vector<ToolCall> calls;
  ChatDelta last;  // text held back until the end: what a stream sends after its deltas
  StopReason stop = StopReason::eos;
  std::string stop_string;  // the request's stop string that ended it ("" when none)
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens found in the session's cache
  Timings timings;
  Json logprobs = Json::array();  // those not handed to ChatTurnEvents::delta
  /// Cut by max_tokens or a full context (not ended by the model or a stop string).
  bool cut() const {
    return stop_string.empty() && (stop == StopReason::length || stop == StopReason::context_full);
  }
};

/// What a streaming response hears while the turn runs (each may be empty).
struct ChatTurnEvents {
  std::function<void()> prompt_done;  // the prompt is computed: the answer starts
  /// A decided piece of the answer; `logprobs` holds the entries since the
  /// last delta (move them out to send them, or leave them to the end).
  std::function<void(const ChatDelta& delta, Json& logprobs)> delta;
};

/// Runs choice `index` of `request` (seeded with the request's seed plus
/// index, so choice 0 is what n = 1 answers). Nothing when the job was
/// cancelled (its client left).
std::optional<ChatTurn> run_chat_turn(const ChatRequest& request, size_t index,
                                      const ServedModel& model, ModelContext& context, Job& job,
                                      const ChatTurnEvents& events = {});

}  // namespace glmrt::serve
