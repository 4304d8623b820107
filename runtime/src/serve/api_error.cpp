#include <glmrt/serve/api_error.h>

namespace glmrt::serve {
namespace {

nlohmann::json or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

// OpenAI's error types by status.
std::string type_for(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace

nlohmann::json error_body(const ApiError& error) {
  return {{"error",
           {{"message", error.what()},
            {"type", error.type()},
            {"param", or_null(error.param())},
            {"code", or_null(error.code())}}}};
}

nlohmann::json error_body(int status, const std::string& message) {
  return error_body(ApiError(status, type_for(status), message));
}

}  // namespace glmrt::serve
