// A `Transfer-Encoding: chunked` request body decoded as its bytes arrive,
// counting what it decodes: past the limit it stops at once (the server
// answers 413 with nothing more buffered), and a malformed chunk is an error
// rather than a wait for bytes that make no sense.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace glmrt::serve {

class ChunkedBody {
 public:
  explicit ChunkedBody(uint64_t max_body_bytes) : max_(max_body_bytes) {}

  enum class Status { more, done, too_large, malformed };
  /// Decodes from `input`, appending data to `body`; `consumed` is set to the
  /// bytes of `input` used (after `done`, the rest is the next request).
  Status feed(std::string_view input, size_t& consumed, std::string& body);
  /// What is wrong, for a `malformed` status.
  const std::string& error() const { return error_; }

 private:
  enum class State { size_line, data, data_end, trailer };
  Status fail(std::string message);

  uint64_t max_;
  State state_ = State::size_line;
  std::string line_;        // the size or trailer line read so far
  uint64_t remaining_ = 0;  // bytes of the current chunk still to come
  std::string error_;
};

}  // namespace glmrt::serve
