// The API endpoints. A generation request is parsed and checked here, on the
// HTTP thread (so a bad request never waits in the queue), then queued for
// the model thread; this thread relays the response and watches the client.
#include "server_state.h"

#include <glmrt/base/printable.h>
#include <glmrt/serve/chat_request.h>
#include <glmrt/serve/completion_jobs.h>
#include <glmrt/serve/completion_request.h>
#include <glmrt/serve/connection_probe.h>
#include <glmrt/serve/json_output.h>
#include <glmrt/serve/messages_request.h>
#include <glmrt/serve/messages_response.h>
#include <glmrt/serve/request_fields.h>
#include <glmrt/serve/responses_events.h>

namespace glmrt::serve {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);

// How an endpoint answers errors: in a body (with the error's status), and
// as the last event of a stream that already began.
struct ErrorShape {
  Json (*body)(const ApiError&);
  std::string (*event)(const ApiError&);
};

Json openai_error_body(const ApiError& error) {
  return error_body(error);
}
std::string openai_error_event(const ApiError& error) {
  return sse_event(error_body(error));
}

constexpr ErrorShape kOpenAiErrors{openai_error_body, openai_error_event};
constexpr ErrorShape kAnthropicErrors{anthropic_error_body, anthropic_error_event};
constexpr ErrorShape kResponsesErrors{openai_error_body, responses_error_event};

std::string dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void respond_json(httplib::Response& res, const Json& body, int status = 200) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

ConnectionProbe probe_for(const httplib::Request& req) {
  return ConnectionProbe(req.remote_addr, req.remote_port, req.local_port);
}

std::shared_ptr<Job> enqueue(ServerState& state, Job::Work work) {
  auto job = std::make_shared<Job>(std::move(work));
  switch (state.worker.submit(job)) {
    case ModelWorker::Admission::queued:
      return job;
    case ModelWorker::Admission::full:
      throw ApiError(429, "rate_limit_error",
                     fmt::format("{} requests are already waiting for the model (--max-queue); "
                                 "try again later",
                                 state.options.limits.max_queue),
                     "", "queue_full");
    case ModelWorker::Admission::closed:
      break;
  }
  throw ApiError(503, "server_error", "the server is shutting down");
}

// A non-streamed response: the whole body once the job is done, unless the
// client leaves first.
void relay_body(ServerState& state, const std::shared_ptr<Job>& job, const httplib::Request& req,
                httplib::Response& res, const ErrorShape& shape = kOpenAiErrors) {
  const ConnectionProbe probe = probe_for(req);
  std::string body, piece;
  for (;;) {
    const Job::Next next = job->next(piece, kPoll);
    if (next == Job::Next::piece) {
      body += piece;
    } else if (next == Job::Next::finished) {
      break;
    } else if (probe.peer_closed()) {
      state.worker.withdraw(job);
      res.status = 499;  // nginx's "client closed request", for the access log
      return;
    }
  }
  if (auto error = job->error()) return respond_json(res, shape.body(*error), error->status());
  res.status = 200;
  res.set_content(body, "application/json");
}

// A streamed response: each event as it comes; the job is withdrawn when the
// client stops reading or disconnects.
void relay_events(ServerState& state, const std::shared_ptr<Job>& job, const httplib::Request& req,
                  httplib::Response& res, const ErrorShape& shape = kOpenAiErrors) {
  auto probe = std::make_shared<ConnectionProbe>(probe_for(req));
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [&state, job, probe, &shape](size_t, httplib::DataSink& sink) {
        std::string piece;
        for (;;) {
          const Job::Next next = job->next(piece, kPoll);
          if (next == Job::Next::piece) {
            if (!sink.write(piece.data(), piece.size())) break;
          } else if (next == Job::Next::finished) {
            if (auto error = job->error()) {
              const std::string event = shape.event(*error);
              sink.write(event.data(), event.size());
            }
            sink.done();
            return true;
          } else if (probe->peer_closed()) {
            break;
          }
        }
        state.worker.withdraw(job);
        return false;
      },
      [&state, job](bool success) {
        if (!success) state.worker.withdraw(job);
      });
}

void chat_completions(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_request_body(req.body);
  auto request =
      std::make_shared<const ChatRequest>(parse_chat_request(body, state.request_context()));
  refuse_unsatisfiable_start(request->generation, *state.model.token_trie);
  const ResponseIdentity identity{state.ids.next("chatcmpl-"), state.model.name, unix_time()};
  auto job = enqueue(state, [&state, request, identity](Job& job) {
    run_chat_completion(*request, identity, state.model, state.ids, state.worker.context(), job);
  });
  if (request->generation.stream) return relay_events(state, job, req, res);
  relay_body(state, job, req, res);
}

void completions(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_request_body(req.body);
  auto request = std::make_shared<const CompletionRequest>(
      parse_completion_request(body, state.request_context()));
  refuse_unsatisfiable_start(request->generation, *state.model.token_trie);
  const ResponseIdentity identity{state.ids.next("cmpl-"), state.model.name, unix_time()};
  auto job = enqueue(state, [&state, request, identity](Job& job) {
    run_text_completion(*request, identity, state.model, state.worker.context(), job);
  });
  if (request->generation.stream) return relay_events(state, job, req, res);
  relay_body(state, job, req, res);
}

// Anthropic's Messages API, on the chat path.
void messages(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_request_body(req.body);
  auto request =
      std::make_shared<const ChatRequest>(parse_messages_request(body, state.request_context()));
  refuse_unsatisfiable_start(request->generation, *state.model.token_trie);
  const ResponseIdentity identity{state.ids.next("msg_"), state.model.name, unix_time()};
  auto job = enqueue(state, [&state, request, identity](Job& job) {
    run_messages(*request, identity, state.model, state.ids, state.worker.context(), job);
  });
  if (request->generation.stream) return relay_events(state, job, req, res, kAnthropicErrors);
  relay_body(state, job, req, res, kAnthropicErrors);
}

// Anthropic's token count (Claude Code asks it before it sends): the prompt
// the same /v1/messages request would run, which needs no max_tokens.
void count_message_tokens(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  Json body = parse_request_body(req.body);
  constexpr std::string_view known[] = {"model",         "messages",     "system",
                                        "tools",         "tool_choice",  "thinking",
                                        "cache_control", "output_config"};
  refuse_fields_outside(body, known, "/v1/messages/count_tokens");
  RequestContext context = state.request_context();
  body["max_tokens"] = max_tokens_limit(context);
  const ChatRequest request = parse_messages_request(body, context);
  respond_json(res, {{"input_tokens", request.prompt.size()}});
}

// OpenAI's Responses API, on the chat path.
void responses(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_request_body(req.body);
  auto request = std::make_shared<const ResponsesRequest>(
      parse_responses_request(body, state.request_context()));
  refuse_unsatisfiable_start(request->chat.generation, *state.model.token_trie);
  const ResponseIdentity identity{state.ids.next("resp_"), state.model.name, unix_time()};
  auto job = enqueue(state, [&state, request, identity](Job& job) {
    run_responses(*request, identity, state.model, state.ids, state.worker.context(), job);
  });
  if (request->chat.generation.stream) return relay_events(state, job, req, res, kResponsesErrors);
  relay_body(state, job, req, res, kResponsesErrors);
}

// {"content" | "prompt": text, "add_special": bool} (llama-server, vLLM) or
// {"messages": [...]} rendered with the chat template, as vLLM allows.
void tokenize(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_request_body(req.body);
  const RequestFields f(body);
  std::string text;
  bool add_special = false;
  std::vector<text::TokenId> ids;
  if (const Json* messages = f.get("messages")) {
    if (!messages->is_array()) bad_request("messages", "`messages` must be a list");
    Json render = {
        {"messages", *messages},
        {"chat_template_kwargs",
         {{"add_generation_prompt", f.boolean("add_generation_prompt").value_or(true)}}}};
    if (const Json* tools = f.get("tools")) render["tools"] = *tools;
    try {
      // As a chat request tokenizes it: message content is plain text.
      ids = text::encode_chat_prompt(state.tokenizer, state.chat_template.render_marked(render),
                                     state.options.allow_special_in_content);
    } catch (const Error& e) {
      bad_request("messages", "{}", e.what());
    }
  } else {
    const char* key = f.has("content") ? "content" : "prompt";
    auto given = f.string(key);
    if (!given) bad_request("content", "give `content` (text) or `messages` to tokenize");
    text = std::move(*given);
    add_special =
        f.boolean("add_special").value_or(f.boolean("add_special_tokens").value_or(false));
    ids = state.tokenizer.encode(text, add_special);
  }
  respond_json(res, {{"tokens", ids},
                     {"count", ids.size()},
                     {"max_model_len", state.engine.profile().max_context}});
}

void detokenize(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  const Json body = parse_request_body(req.body);
  const Json* tokens = RequestFields(body).get("tokens");
  if (!tokens || !tokens->is_array()) bad_request("tokens", "`tokens` must be a list of token ids");
  std::vector<text::TokenId> ids;
  const int32_t vocab = state.engine.model().config().vocab_size;
  for (size_t i = 0; i < tokens->size(); ++i) {
    const Json& t = (*tokens)[i];
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab)
      bad_request("tokens", "`tokens[{}]` is not a token id in 0..{}", i, vocab - 1);
    ids.push_back(static_cast<text::TokenId>(t.get<int64_t>()));
  }
  const std::string text = state.tokenizer.decode(ids);
  // llama-server answers `content`, vLLM `prompt`: both, so either client works.
  respond_json(res, {{"content", text}, {"prompt", text}});
}

Json model_json(const ServerState& state) {
  return {{"id", state.model.name},
          {"object", "model"},
          {"created", state.started},
          {"owned_by", "glmrt"},
          {"max_model_len", state.engine.profile().max_context}};
}

// Runs a handler, answering ApiErrors (and request-text errors) in the
// endpoint's shape (OpenAI's unless said).
httplib::Server::Handler guarded(ServerState& state,
                                 void (*handler)(ServerState&, const httplib::Request&,
                                                 httplib::Response&),
                                 const ErrorShape& shape = kOpenAiErrors) {
  return [&state, handler, &shape](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(state, req, res);
    } catch (const ApiError& e) {
      respond_json(res, shape.body(e), e.status());
    } catch (const Error& e) {  // e.g. text that is not valid UTF-8
      respond_json(res, shape.body(ApiError(400, "invalid_request_error", e.what())), 400);
    }
  };
}

}  // namespace

void respond_error(const httplib::Request& req, httplib::Response& res, const ApiError& error) {
  const ErrorShape& shape = req.path.starts_with("/v1/messages") ? kAnthropicErrors : kOpenAiErrors;
  respond_json(res, shape.body(error), error.status());
}

void register_api_routes(ServerState& state) {
  state.http.Post("/v1/chat/completions", guarded(state, chat_completions));
  state.http.Post("/v1/completions", guarded(state, completions));
  state.http.Post("/v1/messages", guarded(state, messages, kAnthropicErrors));
  state.http.Post("/v1/messages/count_tokens",
                  guarded(state, count_message_tokens, kAnthropicErrors));
  state.http.Post("/v1/responses", guarded(state, responses, kResponsesErrors));
  state.http.Post("/tokenize", guarded(state, tokenize));
  state.http.Post("/detokenize", guarded(state, detokenize));
  state.http.Get("/v1/models", [&state](const httplib::Request&, httplib::Response& res) {
    respond_json(res, {{"object", "list"}, {"data", Json::array({model_json(state)})}});
  });
  state.http.Get("/v1/models/(.+)", [&state](const httplib::Request& req, httplib::Response& res) {
    if (req.matches[1] != state.model.name)
      return respond_error(req, res,
                           ApiError(404, "not_found_error",
                                    fmt::format("no model `{}`: this server serves `{}`",
                                                printable(std::string(req.matches[1]), 256),
                                                printable(state.model.name, 256)),
                                    "model", "model_not_found"));
    respond_json(res, model_json(state));
  });
}

}  // namespace glmrt::serve
