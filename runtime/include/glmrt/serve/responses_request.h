// A /v1/responses request (OpenAI's Responses API) read into the chat
// request the model runs: input as a string or items (messages with
// input_text / output_text parts, function_call, function_call_output and
// reasoning items), instructions, flat function tools, tool_choice,
// max_output_tokens, sampling, reasoning.effort and text.format (json_schema
// is constrained decoding). It is translated into the /v1/chat/completions
// body asking the same. glmrt keeps no server-side state, so store: true,
// previous_response_id and conversation are refused, as is every field this
// server does not implement, with 400 naming it.
#pragma once

#include <glmrt/serve/chat_request.h>

namespace glmrt::serve {

struct ResponsesRequest {
  ChatRequest chat;
  Json settings;  // the request's fields a response object repeats (instructions, tools, ...)
};

/// The /v1/chat/completions body that asks what `body` asks. Throws ApiError
/// 400 naming the Responses field at fault.
Json chat_body_of_responses(const Json& body);

ResponsesRequest parse_responses_request(const Json& body, const RequestContext& context);

}  // namespace glmrt::serve
