#include <glmrt/base/printable.h>
#include <glmrt/serve/api_error.h>

#include <cstdio>
#include <random>

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

ApiError internal_error(std::string_view summary, std::string_view detail) {
  // Random rather than counted: ids stay distinct across restarts of the
  // server whose logs are read together.
  std::random_device random;
  const std::string id = fmt::format("err-{:08x}{:08x}", static_cast<uint32_t>(random()),
                                     static_cast<uint32_t>(random()));
  const std::string line =
      fmt::format("glmrt serve: error {}: {}: {}\n", id, summary, printable(detail));
  std::fwrite(line.data(), 1, line.size(), stderr);
  return ApiError(500, "server_error",
                  fmt::format("{} (error id {}; the server's log has the details)", summary, id),
                  "", "internal_error");
}

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
