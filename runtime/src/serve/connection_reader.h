// Reads every request of `glmrt serve` before any handler thread sees it, on
// one thread that polls all the connections: a slow or idle client costs a
// slot here (at most max_connections), never a handler thread, so /health
// answers whatever many slow clients hold open. Each request must arrive
// whole within its deadline (the head within request_timeout of its first
// byte, the body within request_timeout of its admission), its framing is
// checked (request_head.h), its body counted against max_body_bytes however
// it is framed (413 before anything past the limit is buffered), and bodies
// in flight, from the first byte read until their response is written, are
// held to body_memory in total: a body that does not fit waits, unread, until
// earlier ones are answered. A complete request goes to `dispatch` with its
// head rewritten to Content-Length framing; the connection comes back with
// resume() once answered, so pipelined requests are answered in order.
// Private to src/serve.
#pragma once

#include <glmrt/serve/chunked_body.h>
#include <glmrt/serve/request_head.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace glmrt::serve {

struct ReaderLimits {
  uint64_t max_body_bytes = 8 << 20;
  uint64_t body_memory = 16 << 20;  // request bodies held at once (>= max_body_bytes)
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds idle_timeout{5000};  // a connection with no request under way
  size_t max_connections = 256;
};

/// A request read whole: what the handler parses, and its connection.
struct ReadRequest {
  int fd = -1;
  std::string bytes;     // the canonical head and the decoded body
  std::string leftover;  // bytes after it (a pipelined request)
  bool keep_alive = true;
  uint64_t reserved = 0;  // body memory to release once answered
};

class ConnectionReader {
 public:
  using Dispatch = std::function<void(ReadRequest)>;
  /// Told the status of every request refused here (for metrics and the log).
  using Refused = std::function<void(int status)>;
  ConnectionReader(ReaderLimits limits, Dispatch dispatch, Refused refused);
  ~ConnectionReader();
  ConnectionReader(const ConnectionReader&) = delete;
  ConnectionReader& operator=(const ConnectionReader&) = delete;

  /// A connection just accepted (any thread). Beyond max_connections it is
  /// answered 503 and closed.
  void add(int fd);
  /// A connection whose response was written: it waits for its next request
  /// (starting with `leftover`). After stop() it is closed instead.
  void resume(int fd, std::string leftover);
  /// A handled request's body memory is free again; closes nothing.
  void release(uint64_t bytes);
  /// A connection the handler closed.
  void closed();
  /// Closes every connection being read and joins the thread.
  void stop();

  /// Connections open now (being read, waiting, or being answered).
  size_t open_connections() const;
  /// Body memory reserved now (read, or being answered), and the most ever.
  uint64_t body_memory_held() const { return held_.load(); }
  uint64_t body_memory_peak() const { return peak_.load(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    std::string buffer;  // bytes read and not yet consumed
    enum class Phase { idle, head, waiting_for_memory, body, draining };
    Phase phase = Phase::idle;
    Clock::time_point deadline;
    std::optional<RequestHead> head;
    std::optional<ChunkedBody> chunked;
    std::string body;
    uint64_t reserved = 0;
    size_t drained = 0;
  };

  void loop();
  void wake();
  // Takes the connections handed over; false once stopping.
  bool take_inbox();
  // Reads what the socket has; false when the connection is gone.
  bool read_available(Connection& c);
  // Moves `c` on with the bytes it has; false when it left the reader
  // (dispatched or closed).
  bool advance(Connection& c);
  // Reserves the body's memory; false (waiting) when it does not fit yet.
  bool admit(Connection& c);
  // Answers `status` and drains the connection a moment before closing it.
  bool refuse(Connection& c, int status, const std::string& message);
  bool expire(Connection& c);
  void finish(Connection& c);
  void close_connection(Connection& c);

  const ReaderLimits limits_;
  const Dispatch dispatch_;
  const Refused refused_;
  int wake_read_ = -1, wake_write_ = -1;

  mutable std::mutex mutex_;  // guards the members below it
  std::vector<std::pair<int, std::string>> inbox_;
  uint64_t released_ = 0;
  size_t open_ = 0;
  bool stopping_ = false;

  std::list<Connection> connections_;  // the reader thread's own
  uint64_t body_memory_used_ = 0;
  std::atomic<uint64_t> held_{0}, peak_{0};  // body_memory_used_ as other threads see it
  std::thread thread_;
};

}  // namespace glmrt::serve
