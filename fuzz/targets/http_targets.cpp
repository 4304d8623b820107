// `glmrt serve`'s HTTP framing as its connection reader drives it
// (runtime/src/serve/connection_reader.cpp): stray line ends, the head up to
// its empty line, parse_request_head, then the body by Content-Length or
// chunked, then the next pipelined request. The reader itself reads sockets
// on a thread; this is its sequence of calls on the bytes a client sends.
// Checked: bodies never pass the limit, a chunked body decodes the same
// whether its bytes arrive at once or in pieces, and the canonical head the
// handlers parse is the same request framed by Content-Length.
#include <glmrt/serve/chunked_body.h>
#include <glmrt/serve/request_head.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_targets.h"

namespace glmrt::fuzz {
namespace {

using serve::ChunkedBody;
using serve::ParsedHead;
using serve::RequestHead;

constexpr uint64_t kFramingMaxBody = 1024;
constexpr int kFramingMaxRequests = 64;  // pipelined requests followed in one input

struct ChunkedResult {
  ChunkedBody::Status status = ChunkedBody::Status::more;
  size_t consumed = 0;
  std::string body;
  std::string error;
};

// All of `bytes` at once, as when the whole body is in the buffer.
ChunkedResult decode_chunked_at_once(std::string_view bytes, uint64_t max) {
  ChunkedBody decoder(max);
  ChunkedResult r;
  r.status = decoder.feed(bytes, r.consumed, r.body);
  r.error = decoder.error();
  return r;
}

// `bytes` arriving `piece` at a time into a buffer the reader erases what
// the decoder consumed from.
ChunkedResult decode_chunked_in_pieces(std::string_view bytes, uint64_t max, size_t piece) {
  ChunkedBody decoder(max);
  ChunkedResult r;
  std::string buffer;
  size_t offered = 0;
  while (offered < bytes.size()) {
    const size_t take = std::min(piece, bytes.size() - offered);
    buffer.append(bytes.substr(offered, take));
    offered += take;
    size_t consumed = 0;
    r.status = decoder.feed(buffer, consumed, r.body);
    expect(consumed <= buffer.size(), "the decoder consumes only what it was given");
    buffer.erase(0, consumed);
    r.consumed += consumed;
    if (r.status != ChunkedBody::Status::more) break;
  }
  r.error = decoder.error();
  return r;
}

// The body decoded either way is the same, and within the limit.
ChunkedResult checked_chunked(std::string_view bytes, uint64_t max, size_t piece) {
  const ChunkedResult whole = decode_chunked_at_once(bytes, max);
  const ChunkedResult pieces = decode_chunked_in_pieces(bytes, max, piece);
  expect(whole.status == pieces.status, "a chunked body decodes alike at once and in pieces");
  expect(whole.body.size() <= max, "a chunked body stays within the limit");
  expect(whole.consumed <= bytes.size(), "the decoder consumes only what it was given");
  if (whole.status == ChunkedBody::Status::done) {
    expect(pieces.consumed == whole.consumed, "a chunked body ends at the same byte in pieces");
    expect(pieces.body == whole.body, "a chunked body's data is the same in pieces");
  }
  if (whole.status == ChunkedBody::Status::malformed)
    expect(!whole.error.empty() && whole.error == pieces.error, "a malformed body says why");
  return whole;
}

bool is_http_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

bool is_framing_header(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "content-length" || lower == "transfer-encoding" || lower == "expect";
}

std::vector<std::pair<std::string, std::string>> headers_but_framing(const RequestHead& head) {
  std::vector<std::pair<std::string, std::string>> kept;
  for (const auto& header : head.headers)
    if (!is_framing_header(header.first)) kept.push_back(header);
  return kept;
}

// What an accepted head promises the handlers.
void check_accepted_head(const RequestHead& head) {
  expect(is_http_token(head.method), "the method is a token");
  expect(!head.target.empty() && std::none_of(head.target.begin(), head.target.end(),
                                              [](char c) {
                                                const auto u = static_cast<unsigned char>(c);
                                                return u <= 0x20 || u == 0x7F;
                                              }),
         "the target is one word of visible characters");
  expect(head.version == "HTTP/1.1" || head.version == "HTTP/1.0", "the version is HTTP/1.x");
  for (const auto& [name, value] : head.headers) {
    expect(is_http_token(name), "a header name is a token");
    expect(value.find_first_of("\r\n") == std::string::npos, "a header value is one line");
  }
  if (head.body == RequestHead::Body::length)
    expect(head.content_length > 0 && head.content_length <= kFramingMaxBody,
           "an announced body is within the limit");
}

// The head the handlers parse: the same request, framed by Content-Length.
void check_canonical_head(const RequestHead& head, size_t body_size) {
  const std::string canonical = serve::canonical_head(head, body_size);
  const ParsedHead again = serve::parse_request_head(canonical, kFramingMaxBody);
  expect(again.head.has_value(), "the canonical head parses");
  const RequestHead& h = *again.head;
  expect(h.method == head.method && h.target == head.target && h.version == head.version,
         "the canonical head keeps the request line");
  expect(headers_but_framing(h) == headers_but_framing(head),
         "the canonical head keeps every header but the framing");
  expect(h.body == (body_size > 0 ? RequestHead::Body::length : RequestHead::Body::none) &&
             h.content_length == body_size,
         "the canonical head frames the body by its length");
  expect(h.keep_alive == head.keep_alive, "the canonical head keeps the connection's fate");
  expect(!h.expects_continue, "the canonical head expects nothing");
  expect(serve::find_head_end(canonical) == canonical.size(), "the canonical head is one head");
}

}  // namespace

int fuzz_request_framing(Input input, const ScratchDir&) {
  std::string_view rest = as_text(input);
  const size_t piece = input.size() % 7 + 1;
  for (int request = 0; request < kFramingMaxRequests; ++request) {
    const size_t start = rest.find_first_not_of("\r\n");  // stray line ends between requests
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const auto end = serve::find_head_end(rest);
    if (!end) break;  // the reader waits for more (431 past its head limit)
    expect(*end <= rest.size(), "the head ends within the buffer");
    expect(!serve::find_head_end(rest.substr(0, *end - 1)),
           "the head ends at its first empty line, whatever follows");
    const ParsedHead parsed = serve::parse_request_head(rest.substr(0, *end), kFramingMaxBody);
    rest.remove_prefix(*end);
    if (!parsed.head) {
      const int status = parsed.error.status;
      expect(status == 400 || status == 413 || status == 417 || status == 431,
             "a refused head gets 400, 413, 417 or 431");
      expect(!parsed.error.message.empty(), "a refused head says why");
      break;  // the reader answers and closes the connection
    }
    const RequestHead& head = *parsed.head;
    check_accepted_head(head);
    std::string body;
    if (head.body == RequestHead::Body::length) {
      if (rest.size() < head.content_length) break;  // the reader waits for the rest
      body.assign(rest.substr(0, head.content_length));
      rest.remove_prefix(head.content_length);
    } else if (head.body == RequestHead::Body::chunked) {
      ChunkedResult chunked = checked_chunked(rest, kFramingMaxBody, piece);
      if (chunked.status != ChunkedBody::Status::done) break;  // waits, or 413 / 400
      body = std::move(chunked.body);
      rest.remove_prefix(chunked.consumed);
    }
    expect(body.size() <= kFramingMaxBody, "a body stays within the limit");
    check_canonical_head(head, body.size());
    if (!head.keep_alive) break;  // the connection closes after the response
  }
  return 0;
}

int fuzz_chunked_body(Input input, const ScratchDir&) {
  if (input.empty()) return 0;
  // The first byte sets the limit (0..1020 bytes), the rest is the body.
  const uint64_t max = uint64_t{input[0]} * 4;
  const std::string_view bytes = as_text(input.subspan(1));
  const ChunkedResult r = checked_chunked(bytes, max, input.size() % 5 + 1);
  if (r.status == ChunkedBody::Status::done) {
    // Its data sent again as one chunk decodes to the same data.
    char size[32];
    const int n = std::snprintf(size, sizeof size, "%zx\r\n", r.body.size());
    const std::string again =
        r.body.empty() ? std::string("0\r\n\r\n")
                       : std::string(size, static_cast<size_t>(n)) + r.body + "\r\n0\r\n\r\n";
    const ChunkedResult one = decode_chunked_at_once(again, max);
    expect(one.status == ChunkedBody::Status::done && one.body == r.body &&
               one.consumed == again.size(),
           "a decoded body decodes again from one chunk");
  }
  return 0;
}

}  // namespace glmrt::fuzz
