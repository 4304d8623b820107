// How Python/Jinja2 print JSON values, as transformers' apply_chat_template
// shows them: json.dumps(ensure_ascii=False) for `tojson`, str() for
// `{{ value }}`, str.strip() and truthiness.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace glmrt::text::python {

using Value = nlohmann::ordered_json;

// json.dumps(value, ensure_ascii=False): ", " and ": " separators, keys in
// their original order, non-ASCII written raw.
std::string json_dumps(const Value& value);

// str(value): strings raw, None / True / False, dicts and lists as repr().
std::string str(const Value& value);

// str.strip() with Python's notion of white space.
std::string_view strip(std::string_view text);

// Python truthiness: None, False, 0, "", [] and {} are false.
bool truthy(const Value& value);

}  // namespace glmrt::text::python
