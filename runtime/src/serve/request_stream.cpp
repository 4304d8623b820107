#include "request_stream.h"

#include <glmrt/serve/connection_probe.h>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace glmrt::serve {
namespace {

bool wait_writable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLOUT, 0};
  for (;;) {
    const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0 && (p.revents & POLLOUT) != 0;
  }
}

}  // namespace

bool RequestStream::is_writable() const {
  return !failed_ && wait_writable(request_.fd, write_timeout_);
}

ssize_t RequestStream::read(char* ptr, size_t size) {
  const size_t n = std::min(size, request_.bytes.size() - read_);
  std::memcpy(ptr, request_.bytes.data() + read_, n);
  read_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t RequestStream::write(const char* ptr, size_t size) {
  size_t sent = 0;
  while (!failed_ && sent < size) {
    const ssize_t n = ::send(request_.fd, ptr + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      failed_ = !wait_writable(request_.fd, write_timeout_);
    } else {
      failed_ = true;
    }
  }
  return failed_ ? -1 : static_cast<ssize_t>(sent);
}

void RequestStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  if (!socket_endpoint(request_.fd, true, ip, port)) {
    ip.clear();
    port = -1;
  }
}

void RequestStream::get_local_ip_and_port(std::string& ip, int& port) const {
  if (!socket_endpoint(request_.fd, false, ip, port)) {
    ip.clear();
    port = -1;
  }
}

}  // namespace glmrt::serve
