// Everything the HTTP handlers of `glmrt serve` share. Private to src/serve.
#pragma once

#include <glmrt/engine/engine.h>
#include <glmrt/serve/generation_request.h>
#include <glmrt/serve/metrics.h>
#include <glmrt/serve/model_worker.h>
#include <glmrt/serve/response_parts.h>
#include <glmrt/serve/serve_options.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/tokenizer.h>

#include <httplib.h>

#include <atomic>

namespace glmrt::serve {

struct ServerState {
  ServerState(Engine& engine, text::ModelChatTemplate chat_template, const SamplingParams& defaults,
              ServeOptions options);

  /// A request context for one request (with its own fresh seed).
  RequestContext request_context();

  Engine& engine;
  const text::ModelChatTemplate chat_template;
  const SamplingParams defaults;
  const ServeOptions options;
  const text::Tokenizer tokenizer;
  const ServedModel model;
  Metrics metrics;
  IdSource ids;
  ModelWorker worker;
  httplib::Server http;
  std::atomic<bool> shutting_down{false};
};

/// POST /v1/chat/completions, /v1/completions, /tokenize, /detokenize; GET /v1/models.
void register_api_routes(ServerState& state);

/// Answers `error` in OpenAI's shape.
void respond_error(httplib::Response& res, const ApiError& error);

}  // namespace glmrt::serve
