// OpenAI's `response_format`: {"type": "text"} (free text), {"type":
// "json_object"} (any JSON object) or {"type": "json_schema", "json_schema":
// {"name", "schema", "strict", "description"}}, read into the schema the
// answer is constrained to. A schema keyword outside the supported subset is
// a 400 with param `response_format` naming the keyword and where it is.
#pragma once

#include <glmrt/grammar/json_schema.h>
#include <glmrt/serve/request_fields.h>

#include <memory>

namespace glmrt::serve {

/// Nothing for free text (or no response_format).
std::shared_ptr<const grammar::JsonSchema> read_response_format(const RequestFields& f);

}  // namespace glmrt::serve
