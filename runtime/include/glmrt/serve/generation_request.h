// The request fields /v1/chat/completions and /v1/completions share:
// sampling, token limits, stop strings, streaming. Fields this server does
// not know (request_keys.h), and values it cannot honour (n > 8, a schema
// keyword constrained decoding does not know), are refused with 400 naming
// the field rather than silently ignored.
#pragma once

#include <glmrt/grammar/json_schema.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/serve/request_fields.h>
#include <glmrt/serve/request_keys.h>
#include <glmrt/serve/serve_options.h>
#include <glmrt/serve/tool_call_syntax.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/tokenizer.h>

#include <memory>
#include <string>
#include <vector>

namespace glmrt::serve {

/// What request parsing needs to know about the model and the server.
struct RequestContext {
  const text::Tokenizer& tokenizer;
  const text::ModelChatTemplate& chat_template;
  int32_t vocab_size = 0;
  int64_t max_context = 0;
  SamplingParams defaults;  // generation_config.json, the profile, then serve's flags
  ServeLimits limits;
  uint64_t fresh_seed = 0;  // the seed of a request that names none
  bool allow_special_in_content =
      false;  // --allow-special-in-content: content may hold control tokens
  /// The format the model writes tool calls in (from its chat template).
  const ToolCallSyntax* tool_calls = &glm_tool_call_syntax();
};

struct GenerationRequest {
  SamplingParams sampling;  // max_new_tokens = max_tokens / max_completion_tokens
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool ignore_eos = false;     // vLLM's extension: only max_tokens ends the answer (benchmarks)
  bool skip_special_tokens = true;  // vLLM's: the answer's text leaves special tokens out
  int n = 1;                        // choices per prompt, generated one after another
  // response_format json_object / json_schema: the answer is constrained to
  // this schema (null: free text).
  std::shared_ptr<const grammar::JsonSchema> json_format;
};

GenerationRequest read_generation_request(const Json& body, Endpoint endpoint,
                                          const RequestContext& context);

/// The most tokens a request may ask for: limits.max_tokens, or max_context when 0.
int64_t max_tokens_limit(const RequestContext& context);

}  // namespace glmrt::serve
