// The one list of the top-level fields /v1/chat/completions and
// /v1/completions know: those implemented, those accepted with no effect
// (each for a stated reason, their type still checked), and every other
// field refused with 400 naming it, so a client never believes the server
// honoured a setting it ignored (docs/serve.md, *Request fields*).
#pragma once

#include <glmrt/serve/request_fields.h>

#include <span>
#include <string_view>

namespace glmrt::serve {

enum class Endpoint { chat, completions };

/// Throws ApiError 400 naming the first field of `body` that `endpoint` does
/// not know, or an accepted no-op field of the wrong type.
void refuse_unknown_fields(const RequestFields& body, Endpoint endpoint);

/// For the endpoints that are read into a chat request (/v1/messages,
/// /v1/responses) and their nested objects: throws ApiError 400 naming the
/// first non-null field of `object` that is not in `known`, as a field of
/// `where` (an endpoint's path, or the field that holds the object) that
/// would be ignored. `prefix` goes before field names ("tools[0].").
void refuse_fields_outside(const Json& object, std::span<const std::string_view> known,
                           std::string_view where, std::string_view prefix = {});

}  // namespace glmrt::serve
