// Small accessors for reading tokenizer.json components with errors that
// name the file and the field.
#pragma once

#include <glmrt/base/error.h>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "regex.h"

namespace glmrt::text {

using Json = nlohmann::json;

// Where a component sits, e.g. "qwen3/tokenizer.json: pre_tokenizer.pretokenizers[1]".
struct JsonPath {
  std::string text;

  JsonPath field(std::string_view name) const { return {fmt::format("{}.{}", text, name)}; }
  JsonPath index(std::size_t i) const { return {fmt::format("{}[{}]", text, i)}; }
};

inline const Json& require(const Json& object, std::string_view key, const JsonPath& where) {
  if (!object.is_object()) fail("{}: expected an object", where.text);
  const auto it = object.find(key);
  if (it == object.end()) fail("{}: missing field '{}'", where.text, key);
  return *it;
}

inline std::string require_string(const Json& object, std::string_view key, const JsonPath& where) {
  const Json& value = require(object, key, where);
  if (!value.is_string()) fail("{}: field '{}' must be a string", where.text, key);
  return value.get<std::string>();
}

template <typename T>
T optional_value(const Json& object, std::string_view key, T fallback, const JsonPath& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    fail("{}: field '{}' has the wrong type ({})", where.text, key, it->type_name());
  }
}

// The `type` of a component, checked to be a string.
inline std::string component_type(const Json& spec, const JsonPath& where) {
  return require_string(spec, "type", where);
}

// A Split/Replace `pattern`: {"String": "..."} or {"Regex": "..."}, as a regex.
inline std::string pattern_as_regex(const Json& spec, const JsonPath& where) {
  const Json& pattern = require(spec, "pattern", where);
  const JsonPath at = where.field("pattern");
  if (pattern.contains("Regex")) return require_string(pattern, "Regex", at);
  if (pattern.contains("String")) return escape_literal(require_string(pattern, "String", at));
  fail("{}: expected {{\"String\": ...}} or {{\"Regex\": ...}}", at.text);
}

}  // namespace glmrt::text
