// A /v1/messages request (Anthropic's Messages API) read into the chat
// request the model runs: system text, messages whose content is a string or
// blocks (text, tool_use, tool_result, thinking), tools with input_schema,
// tool_choice auto / any / tool / none, stop_sequences and sampling. It is
// translated into the /v1/chat/completions body asking the same, so the
// chat template, tool-call parsing and forced calls are the chat path's.
// Fields this server does not implement are refused with 400 naming them.
#pragma once

#include <glmrt/serve/chat_request.h>

namespace glmrt::serve {

/// The /v1/chat/completions body that asks what `body` asks. Throws ApiError
/// 400 naming the Anthropic field at fault.
Json chat_body_of_messages(const Json& body);

/// `body` checked and read into a chat request.
ChatRequest parse_messages_request(const Json& body, const RequestContext& context);

}  // namespace glmrt::serve
