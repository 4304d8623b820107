// The one list of the top-level fields /v1/chat/completions and
// /v1/completions know: those implemented, those accepted with no effect
// (each for a stated reason, their type still checked), and every other
// field refused with 400 naming it, so a client never believes the server
// honoured a setting it ignored (docs/serve.md, *Request fields*).
#pragma once

#include <glmrt/serve/request_fields.h>

namespace glmrt::serve {

enum class Endpoint { chat, completions };

/// Throws ApiError 400 naming the first field of `body` that `endpoint` does
/// not know, or an accepted no-op field of the wrong type.
void refuse_unknown_fields(const RequestFields& body, Endpoint endpoint);

}  // namespace glmrt::serve
