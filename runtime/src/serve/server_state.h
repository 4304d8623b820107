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

#include "connection_reader.h"
#include "handler_threads.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

namespace glmrt::serve {

// cpp-httplib behind a ConnectionReader: its accept loop hands each socket to
// `on_accept` (the reader) instead of a thread of its own, and the handler
// threads run its parsing and routing on requests already read whole.
class GuardedServer : public httplib::Server {
 public:
  std::function<void(int fd)> on_accept;
  /// httplib listens with a backlog of 5: a burst of connections (many slow
  /// clients, then /health) would have its handshakes dropped and retried
  /// seconds later. Listening again on the bound socket widens it.
  void widen_backlog(int backlog) { ::listen(svr_sock_, backlog); }
  /// Parses, routes and answers the one request `stream` holds.
  bool serve(httplib::Stream& stream, bool close_connection, bool& connection_closed) {
    return process_request(stream, close_connection, connection_closed, [](httplib::Request&) {});
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    on_accept(static_cast<int>(sock));
    return true;
  }
};

struct ServerState {
  ServerState(Engine& engine, text::ModelChatTemplate chat_template, text::Tokenizer tokenizer,
              const std::vector<int32_t>& stop_ids, const SamplingParams& defaults,
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
  GuardedServer http;
  std::atomic<bool> shutting_down{false};
  const int64_t started = unix_time();  // what /v1/models reports as `created`
  // Requests being answered: a stopping server keeps listening (answering
  // 503) until their responses are written, within the grace period.
  std::mutex answering_mutex;
  std::condition_variable answering_done;
  int answering = 0;
  // Stopped in this order by HttpServer::stop(), before anything above goes.
  std::unique_ptr<HandlerThreads> handlers;
  std::unique_ptr<ConnectionReader> reader;
};

/// POST /v1/chat/completions, /v1/completions, /tokenize, /detokenize; GET /v1/models.
void register_api_routes(ServerState& state);

/// GET /props and /slots (llama-server's).
void register_info_routes(ServerState& state);

/// Answers `error` in the shape of the API `req` asked (Anthropic's for
/// /v1/messages, else OpenAI's).
void respond_error(const httplib::Request& req, httplib::Response& res, const ApiError& error);

}  // namespace glmrt::serve
