// A /v1/chat/completions request turned into what the model runs: the
// messages rendered by the checkpoint's chat template (tools and thinking
// included), tokenized, with the generation settings and what the answer
// must be parsed back into (reasoning, tool calls, logprobs).
#pragma once

#include <glmrt/serve/generation_request.h>

#include <cstdint>
#include <string>
#include <vector>

namespace glmrt::serve {

struct ChatRequest {
  GenerationRequest generation;
  std::vector<int32_t> prompt;
  bool thinking = true;         // the prompt ends inside <think>: the answer starts with reasoning
  int top_logprobs = -1;        // -1 = no logprobs; else alternatives per token (0..20)
  Json tools;                   // tool definitions to parse calls against (null = don't parse)
  std::string forced_answer;    // the answer's start the prompt already holds
  bool forced_call = false;     // forced_answer opens a call (tool_choice required or named)
  std::string forced_function;  // the function tool_choice names ("" for required)
  bool parallel_tool_calls = true;  // false: only an answer's first call is returned
};

/// Throws ApiError (400) naming the field at fault. Thinking is on unless
/// chat_template_kwargs.enable_thinking, a top-level enable_thinking, or
/// thinking.type = "disabled" (GLM's own API) turns it off. tool_choice may
/// be "auto", "none" (tools are shown to the model but calls are not parsed),
/// "required" or a named function: the prompt then ends with the call's
/// opening (`<tool_call>` and the name; after an empty reasoning when
/// thinking is on), so the answer is a call. With a JSON response_format the
/// answer is the JSON, as message content: a prompt that ends inside
/// <think> gets `</think>` (an empty reasoning) so the constraint applies to
/// the content from its first token; a forced call and JSON together are a
/// 400.
ChatRequest parse_chat_request(const Json& body, const RequestContext& context);

}  // namespace glmrt::serve
