#include "chat_page_routes.h"
#include "request_stream.h"
#include "server_state.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/generate/stop_tokens.h>
#include <glmrt/serve/access_policy.h>
#include <glmrt/serve/http_server.h>
#include <glmrt/serve/thread_ceiling.h>

#include <fmt/format.h>

#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <optional>

namespace glmrt::serve {
namespace {

// Paths anyone may fetch: the chat page and its files (it asks for the key
// itself) and the liveness probe.
bool is_public(const httplib::Request& req) {
  return req.method == "OPTIONS" ||
         (req.method == "GET" &&
          (req.path == "/" || req.path.starts_with("/page/") || req.path == "/health"));
}

// Compares without stopping at the first difference, so response time does
// not reveal how much of a guessed key was right.
bool same_key(std::string_view given, std::string_view expected) {
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i)
    difference |=
        static_cast<unsigned char>(given[i] ^ expected[i % std::max<size_t>(1, expected.size())]);
  return difference == 0;
}

// application/json, with parameters (charset) or not.
bool is_json(std::string_view content_type) {
  const std::string_view type = content_type.substr(0, content_type.find(';'));
  std::string lowered;
  for (char c : type)
    if (c != ' ' && c != '\t')
      lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lowered == "application/json";
}

std::string presented_key(const httplib::Request& req) {
  const std::string authorization = req.get_header_value("Authorization");
  if (authorization.starts_with("Bearer ")) return authorization.substr(7);
  return req.get_header_value("x-api-key");
}

// The route a request counts under in /metrics: one of ours, or "other", so
// clients probing random paths cannot grow the metrics without bound.
std::string_view route_label(const std::string& path) {
  static constexpr std::string_view kRoutes[] = {"/",
                                                 "/health",
                                                 "/metrics",
                                                 "/v1/models",
                                                 "/v1/chat/completions",
                                                 "/v1/completions",
                                                 "/tokenize",
                                                 "/detokenize",
                                                 "/props",
                                                 "/slots"};
  for (std::string_view route : kRoutes)
    if (path == route) return route;
  if (path.starts_with("/v1/models/")) return "/v1/models/{id}";
  if (path.starts_with("/page/")) return "/page/{file}";
  return "other";
}

// The message for an error httplib produced itself (no route, body too large, ...).
std::string message_for(int status, const httplib::Request& req, const ServeOptions& options) {
  switch (status) {
    case 404:
      return fmt::format("no route {} {}", printable(req.method, 32), printable(req.path, 256));
    case 413:
      // httplib parses form-encoded bodies itself and caps them at 8 KiB:
      // `curl -d` without a Content-Type lands here.
      if (req.get_header_value("Content-Type").starts_with("application/x-www-form-urlencoded"))
        return "a form-encoded body is limited to 8192 bytes: send the JSON with "
               "`Content-Type: application/json`";
      return fmt::format("the request body is larger than {} bytes (--max-body-bytes)",
                         options.limits.max_body_bytes);
    case 414:
      return "the request URI is too long";
    default:
      return fmt::format("the server could not read the request (HTTP {})", status);
  }
}

void install_handlers(ServerState& state) {
  httplib::Server& http = state.http;
  const ServeOptions& options = state.options;
  if (!options.cors_origin.empty())
    http.set_default_headers(
        {{"Access-Control-Allow-Origin", options.cors_origin}, {"Vary", "Origin"}});
  http.set_pre_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
    // A page the user visits must not reach the model: not through a name
    // rebound to this address, not by posting from its own origin.
    const std::string host = req.get_header_value("Host");
    std::optional<std::string> refusal;
    if (req.has_header("Host")) refusal = host_refusal(host, state.options.allowed_hosts);
    if (!refusal)
      refusal = origin_refusal(req.method, req.get_header_value("Origin"), host,
                               state.options.cors_origin);
    if (refusal) {
      respond_error(req, res, ApiError(403, "permission_error", *refusal, "", "forbidden"));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method == "POST" && !is_json(req.get_header_value("Content-Type"))) {
      // A plain form (text/plain, form-encoded) is what a page can post
      // cross-origin without asking: only JSON bodies are read.
      respond_error(req, res,
                    ApiError(415, "invalid_request_error",
                             "send the request body as JSON with `Content-Type: "
                             "application/json`",
                             "", "unsupported_media_type"));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method == "OPTIONS") {  // a CORS preflight (answered only with --cors)
      if (state.options.cors_origin.empty()) return httplib::Server::HandlerResponse::Unhandled;
      res.status = 204;
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Api-Key");
      res.set_header("Access-Control-Max-Age", "600");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!state.options.api_key.empty() && !is_public(req) &&
        !same_key(presented_key(req), state.options.api_key)) {
      respond_error(
          req, res,
          ApiError(
              401, "authentication_error",
              "missing or wrong API key: send `Authorization: Bearer KEY` (or `x-api-key: KEY`)",
              "", "invalid_api_key"));
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // A response written while the server stops closes its connection and says
  // so, or a client could send its next request on it as the server goes.
  http.set_post_routing_handler([&state](const httplib::Request&, httplib::Response& res) {
    if (state.shutting_down.load()) res.set_header("Connection", "close");
  });
  http.set_error_handler([&state](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.status == 499) return;  // a handler's own error response
    res.set_content(error_body(res.status, message_for(res.status, req, state.options)).dump(),
                    "application/json");
  });
  http.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        std::string detail = "an exception that is not a std::exception";
        try {
          if (error) std::rethrow_exception(error);
        } catch (const std::exception& e) {
          detail = e.what();
        } catch (...) {
        }
        respond_error(req, res,
                      internal_error("the request failed inside the server",
                                     fmt::format("{} {}: {}", req.method, req.path, detail)));
      });
  http.set_logger([&state](const httplib::Request& req, const httplib::Response& res) {
    state.metrics.count_request(route_label(req.path), res.status);
    if (state.options.access_log) {
      // The request line is the client's: escaped, or it could drive the terminal.
      const std::string line =
          fmt::format("{} {} {} {}\n", printable(req.remote_addr), printable(req.method, 32),
                      printable(req.path, 2048), res.status);
      std::fwrite(line.data(), 1, line.size(), stderr);
    }
  });

  register_chat_page_routes(http);
  http.Get("/health", [&state](const httplib::Request&, httplib::Response& res) {
    const bool stopping = state.shutting_down.load();
    res.status = stopping ? 503 : 200;
    res.set_content(Json{{"status", stopping ? "shutting down" : "ok"}}.dump(), "application/json");
  });
  http.Get("/metrics", [&state](const httplib::Request&, httplib::Response& res) {
    state.metrics.set_http(HttpGauges{state.reader->open_connections(),
                                      state.reader->body_memory_held(),
                                      state.reader->body_memory_peak()});
    res.set_content(state.metrics.prometheus_text(state.model.name),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  register_api_routes(state);
  register_info_routes(state);
}

// httplib's accept loop runs each accepted socket's task at once, on its own
// thread: the task only hands the socket to the ConnectionReader.
class InlineTasks final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> task) override { task(); }
  void shutdown() override {}
};

constexpr auto kWriteTimeout = std::chrono::seconds(10);

// One request read whole, on a handler thread: httplib parses, routes and
// answers it; the connection goes back to the reader for the next one.
void handle(ServerState& state, ReadRequest& request) {
  {
    std::lock_guard lock(state.answering_mutex);
    ++state.answering;
  }
  RequestStream stream(request, kWriteTimeout);
  bool closed = false;
  const bool close = !request.keep_alive || state.shutting_down.load();
  try {
    state.http.serve(stream, close, closed);
  } catch (const std::exception& e) {  // the handlers' own are answered inside
    std::fprintf(stderr, "glmrt serve: a request failed: %s\n", printable(e.what()).c_str());
    closed = true;
  }
  state.reader->release(request.reserved);
  {
    std::lock_guard lock(state.answering_mutex);
    --state.answering;
  }
  state.answering_done.notify_all();
  if (close || closed || stream.failed() || state.shutting_down.load()) {
    ::close(request.fd);
    state.reader->closed();
  } else {
    state.reader->resume(request.fd, std::move(request.leftover));
  }
}

ReaderLimits reader_limits(const ServeOptions& o) {
  ReaderLimits limits;
  limits.max_body_bytes = o.limits.max_body_bytes;
  limits.body_memory = std::max(
      o.limits.max_body_memory > 0 ? o.limits.max_body_memory : 2 * o.limits.max_body_bytes,
      o.limits.max_body_bytes);
  limits.request_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.request_timeout_seconds * 1000));
  limits.idle_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.idle_timeout_seconds * 1000));
  limits.max_connections = static_cast<size_t>(o.max_connections);
  return limits;
}

}  // namespace

std::string listening_url(std::string_view host, int port) {
  const std::string shown = printable(host, 256);
  if (host.find(':') != std::string_view::npos) return fmt::format("http://[{}]:{}/", shown, port);
  return fmt::format("http://{}:{}/", shown, port);
}

struct HttpServer::State : ServerState {
  using ServerState::ServerState;
  std::once_flag stopped;
};

ServerState::ServerState(Engine& engine_, text::ModelChatTemplate chat_template_,
                         text::Tokenizer tokenizer_, const std::vector<int32_t>& stop_ids,
                         const SamplingParams& defaults_, ServeOptions options_)
    : engine(engine_),
      chat_template(chat_template_),
      defaults(defaults_),
      options(std::move(options_)),
      tokenizer(std::move(tokenizer_)),
      model{options.model_name,
            tokenizer,
            stop_ids,
            with_role_tokens(stop_ids, tokenizer),
            std::make_shared<const SharedTokenTrie>(
                tokenizer, static_cast<size_t>(engine_.model().config().vocab_size),
                &engine_.budget()),
            &tool_call_syntax_for(chat_template.tools_text())},
      worker(engine_, static_cast<size_t>(options.limits.max_queue),
             static_cast<size_t>(options.slots), static_cast<size_t>(options.parallel), metrics) {}

int HttpServer::parallel() const {
  return state_->options.parallel;
}

RequestContext ServerState::request_context() {
  return RequestContext{tokenizer,
                        chat_template,
                        engine.model().config().vocab_size,
                        engine.profile().max_context,
                        defaults,
                        options.limits,
                        ids.seed(),
                        options.allow_special_in_content,
                        model.tool_calls};
}

HttpServer::HttpServer(Engine& engine, text::ModelChatTemplate chat_template,
                       text::Tokenizer tokenizer, std::vector<int32_t> stop_ids,
                       const SamplingParams& defaults, ServeOptions options) {
  if (options.limits.max_queue < 0) fail("--max-queue must be >= 0");
  if (options.limits.max_messages < 1) fail("--max-messages must be >= 1");
  if (options.limits.max_batch < 1) fail("--max-batch must be >= 1");
  if (options.limits.max_tokens < 0) fail("--max-tokens must be >= 0");
  if (options.limits.max_body_bytes < 1) fail("--max-body-bytes must be >= 1");
  if (options.max_connections < 1) fail("--max-connections must be >= 1");
  const int planned = engine.memory_plan().kv_sequences;
  if (options.parallel < 0 || options.parallel > planned)
    fail(
        "--parallel {} is more than the {} KV cache{} the memory plan counts (the engine was "
        "opened for {}; 0 = what the plan allows)",
        options.parallel, planned, planned == 1 ? "" : "s", planned);
  if (options.parallel == 0) options.parallel = planned;
  if (options.slots == 0) options.slots = std::max(engine.settings().kv_slots, options.parallel);
  if (options.slots < 1 || options.slots > kMaxKvSlots)
    fail("--slots must be in 1..{} (0 = the profile's memory.kv_slots), got {}", kMaxKvSlots,
         options.slots);
  if (options.slots < options.parallel)
    fail("--slots {} is below --parallel {}: each request generating holds a slot", options.slots,
         options.parallel);
  if (!(options.request_timeout_seconds > 0 && options.request_timeout_seconds < 1e6))
    fail("--request-timeout must be a number of seconds > 0");
  if (!(options.idle_timeout_seconds > 0 && options.idle_timeout_seconds < 1e6))
    fail("--idle-timeout must be a number of seconds > 0");
  check_http_threads(options);
  state_ = std::make_unique<State>(engine, chat_template, std::move(tokenizer), stop_ids, defaults,
                                   std::move(options));
  ServerState& state = *state_;
  state.handlers = std::make_unique<HandlerThreads>(requested_http_threads(state.options));
  state.reader = std::make_unique<ConnectionReader>(
      reader_limits(state.options),
      [&state](ReadRequest request) {
        auto shared = std::make_shared<ReadRequest>(std::move(request));
        state.handlers->enqueue([&state, shared] { handle(state, *shared); });
      },
      [&state](int status) {
        state.metrics.count_request("other", status);
        if (state.options.access_log)
          std::fprintf(stderr, "- (refused before routing) %d\n", status);
      });
  GuardedServer& http = state.http;
  http.on_accept = [&state](int fd) { state.reader->add(fd); };
  http.new_task_queue = [] { return new InlineTasks; };  // httplib takes ownership
  http.set_payload_max_length(state.options.limits.max_body_bytes);
  // What httplib advertises in Keep-Alive; the reader enforces the idle time.
  http.set_keep_alive_timeout(
      std::max<time_t>(1, static_cast<time_t>(state.options.idle_timeout_seconds)));
  http.set_keep_alive_max_count(1000);
  // httplib's default sets SO_REUSEPORT, with which a second server binds the
  // same port and the two split the connections; SO_REUSEADDR alone only
  // allows a restart while old connections linger in TIME_WAIT.
  http.set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  install_handlers(state);
}

HttpServer::~HttpServer() {
  stop();
}

int HttpServer::bind() {
  const ServeOptions& o = state_->options;
  errno = 0;
  const int port = o.port == 0 ? state_->http.bind_to_any_port(o.host)
                               : (state_->http.bind_to_port(o.host, o.port) ? o.port : -1);
  // httplib closes the socket after a failed bind(), which leaves its errno.
  const int error = errno;
  if (port < 0 && error == EADDRINUSE)
    fail("cannot listen on {}: address in use (port {} is taken, by another glmrt serve?)",
         listening_url(o.host, o.port), o.port);
  if (port < 0 && error == EACCES)
    fail("cannot listen on {}: permission denied (port {} needs privileges)",
         listening_url(o.host, o.port), o.port);
  if (port < 0)
    fail("cannot listen on {} (in use, or not an address of this machine?)",
         listening_url(o.host, o.port));
  state_->http.widen_backlog(std::max(128, o.max_connections));
  return port;
}

void HttpServer::run() {
  if (!state_->shutting_down.load()) state_->http.listen_after_bind();
  // Whatever ended the loop, the model thread finishes before the engine goes.
  stop();
}

void HttpServer::stop() {
  // A second caller (run() returning while the signal watcher stops the
  // server) waits until the first is done.
  std::call_once(state_->stopped, [this] {
    // New requests are answered 503 (/health too) while the running ones
    // finish; then the server stops accepting, reading and answering.
    state_->shutting_down.store(true);
    const auto grace = std::chrono::milliseconds(
        static_cast<int64_t>(state_->options.shutdown_grace_seconds * 1000));
    const auto deadline = std::chrono::steady_clock::now() + grace;
    state_->worker.shutdown(grace);
    {
      // The answers still being written (a stream the client reads slowly).
      std::unique_lock lock(state_->answering_mutex);
      state_->answering_done.wait_until(lock, deadline, [&] { return state_->answering == 0; });
    }
    state_->http.stop();
    state_->reader->stop();
    state_->handlers->shutdown();
  });
}

}  // namespace glmrt::serve
