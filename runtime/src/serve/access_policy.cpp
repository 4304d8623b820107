#include <glmrt/base/printable.h>
#include <glmrt/serve/access_policy.h>

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace glmrt::serve {
namespace {

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_ipv4(const std::string& host) {
  in_addr address{};
  return inet_pton(AF_INET, host.c_str(), &address) == 1;
}

bool is_ipv6(const std::string& host) {
  in6_addr address{};
  return inet_pton(AF_INET6, host.c_str(), &address) == 1;
}

}  // namespace

std::string host_without_port(std::string_view host_header) {
  if (host_header.starts_with('[')) {
    const size_t close = host_header.find(']');
    return lowercase(host_header.substr(
        1, close == std::string_view::npos ? std::string_view::npos : close - 1));
  }
  // A bare IPv6 address (more than one colon) has no port to strip.
  if (std::count(host_header.begin(), host_header.end(), ':') > 1) return lowercase(host_header);
  return lowercase(host_header.substr(0, host_header.find(':')));
}

bool is_loopback_name(std::string_view host) {
  const std::string h = host_without_port(host);
  if (h == "localhost" || h.ends_with(".localhost") || h == "::1") return true;
  in_addr address{};
  return inet_pton(AF_INET, h.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

std::optional<std::string> host_refusal(std::string_view host_header,
                                        const std::vector<std::string>& allowed) {
  const std::string host = host_without_port(host_header);
  if (is_loopback_name(host_header) || is_ipv4(host) || is_ipv6(host)) return std::nullopt;
  for (const std::string& name : allowed)
    if (name == "*" || lowercase(name) == host) return std::nullopt;
  return fmt::format(
      "Host `{}` is not allowed: this server answers requests addressed to a loopback name or an "
      "IP address (a page whose name resolves here is refused); start it with `--allowed-host "
      "{}` to accept that name",
      printable(host_header, 256), printable(host, 256));
}

std::optional<std::string> origin_refusal(std::string_view method, std::string_view origin,
                                          std::string_view host_header,
                                          std::string_view cors_origin) {
  if (origin.empty() || method == "GET" || method == "HEAD" || method == "OPTIONS")
    return std::nullopt;
  if (cors_origin == "*" || (!cors_origin.empty() && origin == cors_origin)) return std::nullopt;
  // The server's own page: its origin is the scheme and the host it was reached as.
  const std::string lowered = lowercase(origin);
  const std::string host = lowercase(host_header);
  if (lowered == "http://" + host || lowered == "https://" + host) return std::nullopt;
  return fmt::format(
      "requests from a page of origin `{}` are refused (the page could act for whoever runs it); "
      "start the server with `--cors {}` to allow that origin",
      printable(origin, 256), printable(origin, 256));
}

std::vector<std::string> access_warnings(std::string_view listen_host, bool has_api_key,
                                         std::string_view cors_origin) {
  std::vector<std::string> warnings;
  if (!is_loopback_name(listen_host) && !has_api_key)
    warnings.push_back(fmt::format(
        "listening on {} without --api-key: anyone who can reach this machine can use the model",
        printable(listen_host, 256)));
  if (cors_origin == "*")
    warnings.push_back(
        "--cors '*': every web page the user visits may call this server and read its answers");
  return warnings;
}

}  // namespace glmrt::serve
