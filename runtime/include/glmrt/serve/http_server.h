// `glmrt serve`: the OpenAI-compatible HTTP API and the chat page, on
// cpp-httplib (Debian's libcpp-httplib-dev). HTTP threads parse and check
// requests, then hand them to the ModelWorker's queue; see docs/serve.md for
// endpoints, limits and queueing.
#pragma once

#include <glmrt/engine/engine.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/serve/serve_options.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::serve {

/// "http://HOST:PORT/" with an IPv6 address in brackets ("http://[::]:8080/"),
/// the host escaped for printing.
std::string listening_url(std::string_view host, int port);

class HttpServer {
 public:
  /// `engine` must outlive the server. Chat requests render with
  /// `chat_template`, text is read and written by `tokenizer`, answers end at
  /// `stop_ids` (ModelText gives all three); `defaults` are the sampling
  /// settings of requests that name none.
  HttpServer(Engine& engine, text::ModelChatTemplate chat_template, text::Tokenizer tokenizer,
             std::vector<int32_t> stop_ids, const SamplingParams& defaults, ServeOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds the listening socket; returns the port (the one chosen when
  /// options.port is 0). Throws glmrt::Error naming host and port.
  int bind();
  /// Requests generating at once (--parallel, auto resolved).
  int parallel() const;
  /// Serves until stop(); returns once the requests in flight are done.
  void run();
  /// Stops accepting, ends waiting requests with 503, lets the running one
  /// finish within the grace period (else cancels them). Any thread; idempotent.
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace glmrt::serve
