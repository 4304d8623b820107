// The head of an HTTP/1.1 request (request line and header lines) as the
// server's connection reader sees it before any handler runs: how its body is
// framed, checked strictly, because two parties that frame one request
// differently (a proxy and this server) is how requests are smuggled.
// Conflicting or malformed Content-Length, a Transfer-Encoding other than
// `chunked`, both framings at once, and folded header lines are 400s; a body
// announced larger than the limit is a 413 before any of it is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace glmrt::serve {

struct RequestHead {
  std::string method, target, version;
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, values trimmed
  enum class Body { none, length, chunked };
  Body body = Body::none;
  uint64_t content_length = 0;  // Body::length
  bool keep_alive = true;       // HTTP/1.1 without `Connection: close` (1.0 with keep-alive)
  bool expects_continue = false;

  /// The first value of header `name` (case-insensitive), if any.
  std::optional<std::string_view> header(std::string_view name) const;
};

/// Why a request is refused before its body is read: the status and a message.
struct HeadError {
  int status = 400;
  std::string message;
};

/// Where the head ends in `buffer` (just past the empty line; a line may end
/// in LF or CRLF), or nothing while it is incomplete.
std::optional<size_t> find_head_end(std::string_view buffer);

/// Parses a complete head (as find_head_end delimits it). A body longer than
/// `max_body_bytes` is a HeadError 413.
struct ParsedHead {
  std::optional<RequestHead> head;
  HeadError error;  // when !head
};
ParsedHead parse_request_head(std::string_view text, uint64_t max_body_bytes);

/// The head again with the body framed by `Content-Length: body_size` (no
/// Transfer-Encoding, no Expect), ready for a parser that then reads exactly
/// `body_size` bytes: what the handlers see once the reader has the body.
std::string canonical_head(const RequestHead& head, size_t body_size);

}  // namespace glmrt::serve
