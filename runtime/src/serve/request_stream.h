// What cpp-httplib parses and answers one request through: the request the
// ConnectionReader read whole (from memory), the response written to the
// connection's socket (each write waits at most `write_timeout` for room).
// Private to src/serve.
#pragma once

#include "connection_reader.h"

#include <httplib.h>

#include <chrono>

namespace glmrt::serve {

class RequestStream final : public httplib::Stream {
 public:
  RequestStream(const ReadRequest& request, std::chrono::milliseconds write_timeout)
      : request_(request), write_timeout_(write_timeout) {}

  bool is_readable() const override { return read_ < request_.bytes.size(); }
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return request_.fd; }

  /// A write failed or timed out: the connection cannot carry another request.
  bool failed() const { return failed_; }

 private:
  const ReadRequest& request_;
  std::chrono::milliseconds write_timeout_;
  size_t read_ = 0;
  bool failed_ = false;
};

}  // namespace glmrt::serve
