#include <glmrt/base/printable.h>
#include <glmrt/serve/chunked_body.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

namespace glmrt::serve {
namespace {

// A size line ("1a2b;ext=1") or a trailer line longer than this is not one a
// client writes: an error, not an unbounded buffer.
constexpr size_t kMaxLine = 4096;

}  // namespace

ChunkedBody::Status ChunkedBody::fail(std::string message) {
  error_ = std::move(message);
  return Status::malformed;
}

ChunkedBody::Status ChunkedBody::feed(std::string_view input, size_t& consumed, std::string& body) {
  size_t at = 0;
  auto result = [&](Status status) {
    consumed = at;
    return status;
  };
  while (at < input.size()) {
    if (state_ == State::data) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, input.size() - at));
      body.append(input.substr(at, take));
      at += take;
      remaining_ -= take;
      if (remaining_ == 0) state_ = State::data_end;
      continue;
    }
    // A line: the chunk size, the CRLF after a chunk's data, or a trailer.
    const size_t newline = input.find('\n', at);
    const size_t end = newline == std::string_view::npos ? input.size() : newline;
    line_.append(input.substr(at, end - at));
    if (line_.size() > kMaxLine) return result(fail("a chunk-size or trailer line is too long"));
    if (newline == std::string_view::npos) {
      at = input.size();
      break;
    }
    at = newline + 1;
    std::string line = std::exchange(line_, {});
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (state_ == State::data_end) {
      if (!line.empty()) return result(fail("a chunk's data is not followed by CRLF"));
      state_ = State::size_line;
    } else if (state_ == State::size_line) {
      const std::string_view size_text = std::string_view(line).substr(0, line.find(';'));
      if (size_text.empty() || size_text.size() > 15 ||
          !std::all_of(size_text.begin(), size_text.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
        return result(fail(fmt::format("malformed chunk size `{}`", printable(line, 64))));
      const uint64_t size = std::stoull(std::string(size_text), nullptr, 16);
      if (size > max_ || body.size() + size > max_) return result(Status::too_large);
      remaining_ = size;
      state_ = size == 0 ? State::trailer : State::data;
    } else if (line.empty()) {  // the empty line after the trailers ends the body
      return result(Status::done);
    }
  }
  return result(Status::more);
}

}  // namespace glmrt::serve
