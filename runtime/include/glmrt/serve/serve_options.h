// What `glmrt serve` is told on its command line: where to listen, who may
// call it, and the limits that keep one client from exhausting the server.
// Every default here is the one docs/serve.md documents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glmrt::serve {

struct ServeLimits {
  uint64_t max_body_bytes = 8 << 20;  // larger request bodies: 413
  uint64_t max_body_memory = 0;       // bodies held at once (0 = 2 x max_body_bytes); more wait
  int max_queue = 8;       // requests waiting for the model beyond the --parallel running: 429
  int max_messages = 512;  // chat messages per request: 400
  int max_tokens = 0;      // most tokens a request may ask to generate (0 = max_context): 400
  int max_batch = 64;      // prompts per /v1/completions request: 400
};

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                         // 0 = any free port (printed when listening)
  std::string api_key;                     // empty = no authentication
  std::string cors_origin;                 // empty = no CORS headers
  std::vector<std::string> allowed_hosts;  // Host names accepted beyond loopback and addresses
  std::string model_name;                  // reported by /v1/models and in responses
  std::string build_info;                  // glmrt's version, reported by /props
  int http_threads = 0;  // 0 = max_queue + parallel + 3: every queued or running request holds one
  int max_connections = 256;  // open connections (503 beyond)
  /// Requests generating at once, decoded together (one forward per step);
  /// each needs a KV cache of max_context, which the memory plan counts.
  /// 0 = what the memory plan allows (MemoryPlan::kv_sequences).
  int parallel = 0;
  /// Conversations kept cached (sharing the KV memory of --parallel
  /// max_context sequences); 0 = the profile's memory.kv_slots (auto: from
  /// max_context), and at least --parallel.
  int slots = 0;
  double request_timeout_seconds = 30;  // a request's head, then its body, must arrive in this: 408
  double idle_timeout_seconds = 5;      // a connection with no request under way is closed
  double shutdown_grace_seconds = 10;   // after SIGTERM, how long the running request may finish
  bool access_log = true;               // one line per request on stderr
  bool allow_special_in_content = false;  // message content tokenized with control tokens parsed
  ServeLimits limits;
};

}  // namespace glmrt::serve
