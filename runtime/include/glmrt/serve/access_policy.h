// Who may drive a server on loopback. A web page the user visits can send
// requests to 127.0.0.1 (a form's cross-origin POST) or, through DNS
// rebinding, make its own name resolve to 127.0.0.1 and read the answers;
// both carry something the server can check. The Host must be a loopback
// name, an IP address (a rebinding page has a name of its own) or a name
// allowed with --allowed-host; a POST from a browser page of another origin
// (its Origin header) is refused unless --cors allows that origin.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::serve {

/// "localhost", "*.localhost", an address in 127.0.0.0/8 or ::1.
bool is_loopback_name(std::string_view host);

/// The host of a Host header value (port and IPv6 brackets removed).
std::string host_without_port(std::string_view host_header);

/// Why `host_header` is refused (empty when it is allowed): `allowed` are
/// --allowed-host names ("*" allows any).
std::optional<std::string> host_refusal(std::string_view host_header,
                                        const std::vector<std::string>& allowed);

/// Why a request of `method` with Origin `origin` (empty: none, as from
/// non-browser clients) to a server reached as `host_header` is refused:
/// only requests that change state (not GET, HEAD, OPTIONS) are checked, and
/// the server's own pages and `cors_origin` ("*" = any) may send them.
std::optional<std::string> origin_refusal(std::string_view method, std::string_view origin,
                                          std::string_view host_header,
                                          std::string_view cors_origin);

/// Warnings for a server started so: listening beyond loopback without an
/// API key, CORS for every origin.
std::vector<std::string> access_warnings(std::string_view listen_host, bool has_api_key,
                                         std::string_view cors_origin);

}  // namespace glmrt::serve
