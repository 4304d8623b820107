// An error answered to an HTTP client in OpenAI's shape:
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// with the status it goes out with. Request parsing throws these, naming the
// field at fault in `param`, so a client sees exactly what to change.
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace glmrt::serve {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, std::string message, std::string param = {},
           std::string code = {})
      : std::runtime_error(std::move(message)),
        status_(status),
        type_(std::move(type)),
        param_(std::move(param)),
        code_(std::move(code)) {}

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string type_, param_, code_;
};

/// 400 invalid_request_error about `param` (empty when no single field is at fault).
template <typename... Args>
[[noreturn]] void bad_request(std::string param, fmt::format_string<Args...> format,
                              Args&&... args) {
  throw ApiError(400, "invalid_request_error", fmt::format(format, std::forward<Args>(args)...),
                 std::move(param));
}

/// A 500 for a failure inside the server. Its detail (an exception's
/// message: file system paths, internal state) goes to stderr only, on a line
/// with a fresh id; the client gets `summary` (generic: nothing from inside
/// the server) and that id, to match its answer with the log.
ApiError internal_error(std::string_view summary, std::string_view detail);

/// The response body for `error`.
nlohmann::json error_body(const ApiError& error);

/// The response body for an error of `status` with `message` (type chosen by status).
nlohmann::json error_body(int status, const std::string& message);

}  // namespace glmrt::serve
