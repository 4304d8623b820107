// Reading an HTTP request body: JSON parsed with a nesting limit (the chat
// template prints tool schemas recursively, so unbounded nesting would cost
// unbounded stack), and typed access to optional fields whose errors are
// ApiErrors naming the field: `temperature` must be a number in [0, 2].
// A field that is absent or null takes its default, as OpenAI treats null.
#pragma once

#include <glmrt/serve/api_error.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace glmrt::serve {

using Json = nlohmann::ordered_json;

/// The deepest nesting a request body may use.
inline constexpr int kMaxJsonDepth = 64;

/// Parses a request body that must be a JSON object; 400 naming the problem
/// (the parser's position and what it expected) otherwise.
Json parse_request_body(std::string_view body);

class RequestFields {
 public:
  /// `object` must outlive this; `prefix` goes before field names in errors
  /// (e.g. "stream_options.").
  explicit RequestFields(const Json& object, std::string prefix = {});

  bool has(std::string_view key) const;  // present and not null
  const Json* get(std::string_view key) const;

  std::optional<double> number(std::string_view key, double min, double max) const;
  std::optional<int64_t> integer(std::string_view key, int64_t min, int64_t max) const;
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<std::string> string(std::string_view key) const;

  std::string name(std::string_view key) const { return prefix_ + std::string(key); }
  const Json& object() const { return object_; }

 private:
  const Json& object_;
  std::string prefix_;
};

}  // namespace glmrt::serve
