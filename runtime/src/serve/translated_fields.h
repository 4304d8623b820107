// Reading the requests of the APIs translated into a chat request
// (/v1/messages, /v1/responses): a block's or item's `type`, and a field
// that must be a string. Private to src/serve.
#pragma once

#include <glmrt/serve/request_fields.h>

#include <string>

namespace glmrt::serve {

/// `object.type` when it is a string, else "".
inline std::string type_of(const Json& object) {
  return object.is_object() && object.contains("type") && object["type"].is_string()
             ? object["type"].get<std::string>()
             : std::string();
}

/// `object[key]`, which must be a string; 400 naming `where.key` otherwise.
inline std::string required_string(const Json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string())
    bad_request(where + "." + key, "`{}.{}` is required: a string", where, key);
  return object[key].get<std::string>();
}

}  // namespace glmrt::serve
