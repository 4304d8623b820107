// A /v1/completions request: one prompt or a batch, each as text or token
// ids (ids are used as given, no special tokens added), with OpenAI's legacy
// `echo` and `logprobs`. lm-evaluation-harness's local-completions backend
// sends batches of id prompts with echo, logprobs 1 and max_tokens 0 or 1.
#pragma once

#include <glmrt/serve/generation_request.h>

#include <cstdint>
#include <vector>

namespace glmrt::serve {

struct CompletionRequest {
  GenerationRequest generation;
  std::vector<std::vector<int32_t>> prompts;  // one choice each, in order
  bool echo = false;  // the prompt comes back before the completion (text and logprobs)
  int logprobs = -1;  // -1 = none; else alternatives per token (0..20)
};

/// Throws ApiError (400) naming the field at fault.
CompletionRequest parse_completion_request(const Json& body, const RequestContext& context);

}  // namespace glmrt::serve
