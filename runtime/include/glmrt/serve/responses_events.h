// The answer to a /v1/responses request in the Responses API's shapes: a
// response object whose output holds a reasoning item (its summary carries
// the thinking text), a message with output_text, and function_call items;
// or, streaming, the named events response.created, response.in_progress,
// response.output_item.added / .done, response.content_part.added / .done,
// response.output_text.delta / .done, response.reasoning_summary_* ,
// response.function_call_arguments.delta / .done and response.completed
// (response.incomplete when cut by max_output_tokens), each numbered by
// sequence_number.
#pragma once

#include <glmrt/serve/chat_turn.h>
#include <glmrt/serve/responses_request.h>

namespace glmrt::serve {

/// Runs `request` on the model thread.
void run_responses(const ResponsesRequest& request, const ResponseIdentity& identity,
                   const ServedModel& model, IdSource& ids, ModelContext& context, Job& job);

/// `error` as the `error` event of a Responses stream.
std::string responses_error_event(const ApiError& error);

}  // namespace glmrt::serve
