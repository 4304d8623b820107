// The answer to a /v1/messages request in Anthropic's shapes: a message with
// content blocks (thinking, text, tool_use), stop_reason and usage; or, when
// streaming, the named server-sent events message_start, ping,
// content_block_start / _delta / _stop, message_delta and message_stop.
// Errors are {"type": "error", "error": {"type", "message"}}.
#pragma once

#include <glmrt/serve/chat_turn.h>

namespace glmrt::serve {

/// Runs `request` (read by parse_messages_request) on the model thread.
void run_messages(const ChatRequest& request, const ResponseIdentity& identity,
                  const ServedModel& model, IdSource& ids, ModelContext& context, Job& job);

/// Anthropic's stop_reason: max_tokens (cut by max_tokens or a full context),
/// stop_sequence, tool_use or end_turn.
std::string anthropic_stop_reason(const ChatTurn& turn);

/// `error` in Anthropic's shape, and as the `error` event of a stream.
Json anthropic_error_body(const ApiError& error);
std::string anthropic_error_event(const ApiError& error);

/// A tool call's arguments as the object tool_use.input holds ({} when a
/// call cut by max_tokens left them unparseable; stop_reason says so).
Json call_input(const ToolCall& call);

}  // namespace glmrt::serve
