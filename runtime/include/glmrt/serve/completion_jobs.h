// The work of /v1/chat/completions and /v1/completions on the model thread:
// run the prompt through the session (reusing its cached prefix), generate,
// and send either the whole response body or, when streaming, one
// server-sent event per step followed by `data: [DONE]`. A job whose client
// went away stops at the next prefill chunk or token.
#pragma once

#include <glmrt/serve/chat_request.h>
#include <glmrt/serve/completion_request.h>
#include <glmrt/serve/job.h>
#include <glmrt/serve/model_worker.h>
#include <glmrt/serve/response_parts.h>

namespace glmrt::serve {

void run_chat_completion(const ChatRequest& request, const ResponseIdentity& identity,
                         const ServedModel& model, IdSource& ids, ModelContext& context, Job& job);

void run_text_completion(const CompletionRequest& request, const ResponseIdentity& identity,
                         const ServedModel& model, ModelContext& context, Job& job);

}  // namespace glmrt::serve
