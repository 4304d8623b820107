#include <glmrt/base/printable.h>
#include <glmrt/serve/request_head.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace glmrt::serve {
namespace {

constexpr size_t kMaxHeaders = 128;

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim_header_space(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 9110's tchar: what a header name is made of.
bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::vector<std::string_view> split_list(std::string_view value) {
  std::vector<std::string_view> items;
  size_t start = 0;
  for (;;) {
    const size_t comma = value.find(',', start);
    items.push_back(trim_header_space(value.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

bool list_has(std::string_view value, std::string_view item) {
  for (std::string_view entry : split_list(value))
    if (same_name(entry, item)) return true;
  return false;
}

ParsedHead refuse(int status, std::string message) {
  return ParsedHead{std::nullopt, HeadError{status, std::move(message)}};
}

}  // namespace

std::optional<std::string_view> RequestHead::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (same_name(key, name)) return value;
  return std::nullopt;
}

std::optional<size_t> find_head_end(std::string_view buffer) {
  for (size_t at = buffer.find('\n'); at != std::string_view::npos;
       at = buffer.find('\n', at + 1)) {
    if (at + 1 < buffer.size() && buffer[at + 1] == '\n') return at + 2;
    if (at + 2 < buffer.size() && buffer[at + 1] == '\r' && buffer[at + 2] == '\n') return at + 3;
  }
  return std::nullopt;
}

ParsedHead parse_request_head(std::string_view text, uint64_t max_body_bytes) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) return refuse(400, "the request has no request line");

  RequestHead head;
  const std::string_view request_line = lines[0];
  const size_t first_space = request_line.find(' ');
  const size_t last_space = request_line.rfind(' ');
  if (first_space == std::string_view::npos || first_space == last_space)
    return refuse(400, fmt::format("malformed request line `{}`", printable(request_line, 256)));
  head.method = request_line.substr(0, first_space);
  head.target = request_line.substr(first_space + 1, last_space - first_space - 1);
  head.version = request_line.substr(last_space + 1);
  // One token, one word, one version: a line another parser could split
  // otherwise (two spaces, a space inside the target) is refused here.
  const bool method_ok =
      !head.method.empty() && std::all_of(head.method.begin(), head.method.end(), is_token_char);
  const bool target_ok =
      !head.target.empty() && std::none_of(head.target.begin(), head.target.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7F;
      });
  if (!method_ok || !target_ok)
    return refuse(400, fmt::format("malformed request line `{}` (expected METHOD TARGET VERSION)",
                                   printable(request_line, 256)));
  if (head.version != "HTTP/1.1" && head.version != "HTTP/1.0")
    return refuse(400, fmt::format("unsupported HTTP version `{}` (HTTP/1.1 or 1.0)",
                                   printable(head.version, 32)));
  if (lines.size() - 1 > kMaxHeaders)
    return refuse(431, fmt::format("the request has more than {} header lines", kMaxHeaders));

  std::vector<std::string_view> lengths, encodings;
  int hosts = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.front() == ' ' || line.front() == '\t')
      return refuse(400, "folded header lines (obsolete line folding) are not accepted");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 ||
        !std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon),
                     is_token_char))
      return refuse(400, fmt::format("malformed header line `{}`", printable(line, 256)));
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim_header_space(line.substr(colon + 1));
    if (std::any_of(value.begin(), value.end(), [](char c) {
          const auto u = static_cast<unsigned char>(c);
          return (u < 0x20 && c != '\t') || u == 0x7F;
        }))
      return refuse(400, fmt::format("header `{}` holds a control character", printable(name)));
    if (same_name(name, "Content-Length")) {
      for (std::string_view item : split_list(value)) lengths.push_back(item);
    } else if (same_name(name, "Transfer-Encoding")) {
      for (std::string_view item : split_list(value)) encodings.push_back(item);
    } else if (same_name(name, "Host")) {
      ++hosts;
    }
    head.headers.emplace_back(name, value);
  }
  if (hosts > 1) return refuse(400, "the request has more than one Host header");
  if (hosts == 0 && head.version == "HTTP/1.1")
    return refuse(400, "an HTTP/1.1 request needs a Host header");

  if (!encodings.empty()) {
    if (encodings.size() != 1 || !same_name(encodings[0], "chunked"))
      return refuse(400, fmt::format("Transfer-Encoding `{}` is not supported (only `chunked`)",
                                     printable(*head.header("Transfer-Encoding"), 128)));
    if (!lengths.empty())
      return refuse(400, "a request may not have both Transfer-Encoding and Content-Length");
    head.body = RequestHead::Body::chunked;
  } else if (!lengths.empty()) {
    for (std::string_view item : lengths) {
      if (item.empty() || !std::all_of(item.begin(), item.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          }))
        return refuse(
            400, fmt::format("Content-Length `{}` is not a number of bytes", printable(item, 64)));
      if (item != lengths[0])
        return refuse(400, fmt::format("conflicting Content-Length values `{}` and `{}`",
                                       printable(lengths[0], 64), printable(item, 64)));
    }
    const std::string_view digits = lengths[0];
    uint64_t length = 0;
    bool too_large = false;
    for (char c : digits) {
      const auto digit = static_cast<uint64_t>(c - '0');
      if (length > (UINT64_MAX - digit) / 10) {
        too_large = true;
        break;
      }
      length = length * 10 + digit;
    }
    if (too_large || length > max_body_bytes)
      return refuse(413, fmt::format("the request body is larger than {} bytes (--max-body-bytes)",
                                     max_body_bytes));
    head.body = length > 0 ? RequestHead::Body::length : RequestHead::Body::none;
    head.content_length = length;
  }

  const auto connection = head.header("Connection");
  head.keep_alive = head.version == "HTTP/1.1" ? !(connection && list_has(*connection, "close"))
                                               : connection && list_has(*connection, "keep-alive");
  if (const auto expect = head.header("Expect")) {
    if (!same_name(*expect, "100-continue"))
      return refuse(417, fmt::format("Expect `{}` is not supported", printable(*expect, 64)));
    head.expects_continue = true;
  }
  return ParsedHead{std::move(head), {}};
}

std::string canonical_head(const RequestHead& head, size_t body_size) {
  std::string out = fmt::format("{} {} {}\r\n", head.method, head.target, head.version);
  for (const auto& [name, value] : head.headers) {
    if (same_name(name, "Content-Length") || same_name(name, "Transfer-Encoding") ||
        same_name(name, "Expect"))
      continue;
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  if (head.body != RequestHead::Body::none || body_size > 0)
    out += fmt::format("Content-Length: {}\r\n", body_size);
  out += "\r\n";
  return out;
}

}  // namespace glmrt::serve
