#include "connection_reader.h"

#include <glmrt/serve/api_error.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace glmrt::serve {
namespace {

constexpr size_t kMaxHead = 32 << 10;    // request line and headers (431 beyond)
constexpr size_t kReadChunk = 16 << 10;  // bytes taken from a socket per wake-up
constexpr auto kDrainTime = std::chrono::milliseconds(1000);
constexpr size_t kMaxDrain = 1 << 20;  // bytes discarded after a refusal before closing

std::string_view reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// One non-blocking send: a refusal is small and the connection closes after
// it, so a client that does not read gets what fits.
void send_once(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;
    }
  }
}

std::string error_response(int status, const std::string& message) {
  const std::string body = error_body(status, message).dump();
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}",
      status, reason_phrase(status), body.size(), body);
}

}  // namespace

ConnectionReader::ConnectionReader(ReaderLimits limits, Dispatch dispatch, Refused refused)
    : limits_(limits), dispatch_(std::move(dispatch)), refused_(std::move(refused)) {
  int fds[2];
  if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  wake_read_ = fds[0];
  wake_write_ = fds[1];
  thread_ = std::thread([this] { loop(); });
}

ConnectionReader::~ConnectionReader() {
  stop();
  ::close(wake_read_);
  ::close(wake_write_);
}

void ConnectionReader::wake() {
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_write_, &byte, 1);  // full pipe: awake anyway
}

void ConnectionReader::add(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  bool stopping = false;
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && open_ < limits_.max_connections) {
      ++open_;
      inbox_.emplace_back(fd, std::string());
      wake();
      return;
    }
    stopping = stopping_;
  }
  // A connection that arrives once reading has stopped (the server is
  // finishing its last responses) is told so, not that it is one too many.
  send_once(fd, error_response(
                    503, stopping ? "the server is shutting down"
                                  : "the server has too many open connections; try again later"));
  if (refused_) refused_(503);
  ::close(fd);
}

void ConnectionReader::resume(int fd, std::string leftover) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      inbox_.emplace_back(fd, std::move(leftover));
      wake();
      return;
    }
    --open_;
  }
  ::close(fd);
}

void ConnectionReader::release(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  released_ += bytes;
  wake();
}

void ConnectionReader::closed() {
  std::lock_guard lock(mutex_);
  --open_;
}

size_t ConnectionReader::open_connections() const {
  std::lock_guard lock(mutex_);
  return open_;
}

void ConnectionReader::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake();
  }
  if (thread_.joinable()) thread_.join();
}

bool ConnectionReader::take_inbox() {
  std::vector<std::pair<int, std::string>> arrived;
  bool stopping = false;
  {
    std::lock_guard lock(mutex_);
    arrived.swap(inbox_);
    body_memory_used_ -= std::min(body_memory_used_, released_);
    released_ = 0;
    stopping = stopping_;
  }
  const auto now = Clock::now();
  for (auto& [fd, leftover] : arrived) {
    Connection& c = connections_.emplace_back();
    c.fd = fd;
    c.buffer = std::move(leftover);
    c.deadline = now + limits_.idle_timeout;
  }
  return !stopping;
}

void ConnectionReader::loop() {
  std::vector<pollfd> polled;
  std::vector<std::list<Connection>::iterator> owners;
  while (take_inbox()) {
    // Bodies that waited for memory go first, oldest first; then pipelined
    // requests that came back with their connection.
    for (auto it = connections_.begin(); it != connections_.end();) {
      const bool keep =
          it->phase != Connection::Phase::waiting_for_memory || !admit(*it) || advance(*it);
      it = keep ? std::next(it) : connections_.erase(it);
    }
    for (auto it = connections_.begin(); it != connections_.end();)
      it = it->phase == Connection::Phase::idle && !it->buffer.empty() && !advance(*it)
               ? connections_.erase(it)
               : std::next(it);

    held_.store(body_memory_used_);
    polled.assign(1, pollfd{wake_read_, POLLIN, 0});
    owners.clear();
    auto soonest = Clock::now() + std::chrono::seconds(1);
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      soonest = std::min(soonest, it->deadline);
      if (it->phase == Connection::Phase::waiting_for_memory) continue;
      polled.push_back(pollfd{it->fd, POLLIN, 0});
      owners.push_back(it);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(soonest - Clock::now());
    ::poll(polled.data(), polled.size(), static_cast<int>(std::max<int64_t>(0, wait.count()) + 1));
    if (polled[0].revents & POLLIN) {
      char sink[256];
      while (::read(wake_read_, sink, sizeof sink) > 0) {
      }
    }
    for (size_t i = 1; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      Connection& c = *owners[i - 1];
      const bool open = read_available(c);
      if (!(open ? advance(c) : (close_connection(c), false))) connections_.erase(owners[i - 1]);
    }
    const auto now = Clock::now();
    for (auto it = connections_.begin(); it != connections_.end();)
      it = it->deadline <= now && !expire(*it) ? connections_.erase(it) : std::next(it);
  }
  for (Connection& c : connections_) close_connection(c);
  connections_.clear();
  std::lock_guard lock(mutex_);
  for (auto& [fd, leftover] : inbox_) {
    ::close(fd);
    --open_;
  }
  inbox_.clear();
}

bool ConnectionReader::read_available(Connection& c) {
  char chunk[kReadChunk];
  const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
  if (n > 0) {
    if (c.phase == Connection::Phase::draining) {
      c.drained += static_cast<size_t>(n);
      return c.drained < kMaxDrain;
    }
    c.buffer.append(chunk, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  // The peer closed (or reset). Bytes of a complete request it sent before
  // closing were taken already; a request cut short has no one to answer.
  return false;
}

bool ConnectionReader::admit(Connection& c) {
  const RequestHead& head = *c.head;
  const uint64_t need = head.body == RequestHead::Body::length    ? head.content_length
                        : head.body == RequestHead::Body::chunked ? limits_.max_body_bytes
                                                                  : 0;
  if (need > 0 && body_memory_used_ > 0 && body_memory_used_ + need > limits_.body_memory) {
    if (c.phase != Connection::Phase::waiting_for_memory) {
      c.phase = Connection::Phase::waiting_for_memory;
      c.deadline = Clock::now() + limits_.request_timeout;
    }
    return false;
  }
  body_memory_used_ += need;
  held_.store(body_memory_used_);
  peak_.store(std::max(peak_.load(), body_memory_used_));
  c.reserved = need;
  c.phase = Connection::Phase::body;
  c.deadline = Clock::now() + limits_.request_timeout;
  if (head.expects_continue) send_once(c.fd, "HTTP/1.1 100 Continue\r\n\r\n");
  return true;
}

bool ConnectionReader::advance(Connection& c) {
  using Phase = Connection::Phase;
  for (;;) {
    switch (c.phase) {
      case Phase::idle: {
        // Stray line ends between requests are allowed (RFC 9112, 2.2).
        const size_t start = c.buffer.find_first_not_of("\r\n");
        c.buffer.erase(0, start == std::string::npos ? c.buffer.size() : start);
        if (c.buffer.empty()) return true;
        c.phase = Phase::head;
        c.deadline = Clock::now() + limits_.request_timeout;
        break;
      }
      case Phase::head: {
        const auto end = find_head_end(c.buffer);
        if (!end || *end > kMaxHead) {
          if (c.buffer.size() <= kMaxHead) return true;
          return refuse(c, 431, fmt::format("the request head is larger than {} bytes", kMaxHead));
        }
        ParsedHead parsed =
            parse_request_head(std::string_view(c.buffer).substr(0, *end), limits_.max_body_bytes);
        c.buffer.erase(0, *end);
        if (!parsed.head) return refuse(c, parsed.error.status, parsed.error.message);
        c.head = std::move(parsed.head);
        if (c.head->body == RequestHead::Body::chunked) c.chunked.emplace(limits_.max_body_bytes);
        if (!admit(c)) return true;
        break;
      }
      case Phase::waiting_for_memory:
        return true;
      case Phase::body: {
        const RequestHead& head = *c.head;
        if (head.body == RequestHead::Body::length) {
          const size_t take = static_cast<size_t>(
              std::min<uint64_t>(c.buffer.size(), head.content_length - c.body.size()));
          c.body.append(c.buffer, 0, take);
          c.buffer.erase(0, take);
          if (c.body.size() < head.content_length) return true;
        } else if (head.body == RequestHead::Body::chunked) {
          size_t consumed = 0;
          const ChunkedBody::Status status = c.chunked->feed(c.buffer, consumed, c.body);
          c.buffer.erase(0, consumed);
          if (status == ChunkedBody::Status::too_large)
            return refuse(c, 413,
                          fmt::format("the request body is larger than {} bytes (--max-body-bytes)",
                                      limits_.max_body_bytes));
          if (status == ChunkedBody::Status::malformed)
            return refuse(c, 400, "malformed chunked body: " + c.chunked->error());
          if (status == ChunkedBody::Status::more) return true;
        }
        finish(c);
        return false;
      }
      case Phase::draining:
        c.buffer.clear();
        return true;
    }
  }
}

void ConnectionReader::finish(Connection& c) {
  if (c.body.size() < c.reserved) {  // a chunked body reserved the limit
    body_memory_used_ -= c.reserved - c.body.size();
    c.reserved = c.body.size();
  }
  ReadRequest request;
  request.fd = c.fd;
  request.bytes = canonical_head(*c.head, c.body.size()) + c.body;
  request.leftover = std::move(c.buffer);
  request.keep_alive = c.head->keep_alive;
  request.reserved = c.reserved;
  dispatch_(std::move(request));
}

bool ConnectionReader::refuse(Connection& c, int status, const std::string& message) {
  body_memory_used_ -= std::min(body_memory_used_, c.reserved);
  c.reserved = 0;
  c.body.clear();
  c.body.shrink_to_fit();
  c.buffer.clear();
  send_once(c.fd, error_response(status, message));
  if (refused_) refused_(status);
  // Read (and drop) what the client still sends for a moment, so the
  // refusal reaches it rather than a reset for unread data.
  ::shutdown(c.fd, SHUT_WR);
  c.phase = Connection::Phase::draining;
  c.deadline = Clock::now() + kDrainTime;
  return true;
}

bool ConnectionReader::expire(Connection& c) {
  using Phase = Connection::Phase;
  switch (c.phase) {
    case Phase::head:
    case Phase::body:
      return refuse(c, 408,
                    fmt::format("the request did not arrive within {} s (--request-timeout)",
                                limits_.request_timeout.count() / 1000.0));
    case Phase::waiting_for_memory:
      return refuse(c, 503, "the server is busy reading other request bodies; try again later");
    case Phase::idle:
    case Phase::draining:
      break;
  }
  close_connection(c);
  return false;
}

void ConnectionReader::close_connection(Connection& c) {
  body_memory_used_ -= std::min(body_memory_used_, c.reserved);
  c.reserved = 0;
  ::close(c.fd);
  std::lock_guard lock(mutex_);
  --open_;
}

}  // namespace glmrt::serve
