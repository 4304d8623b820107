#pragma once

#include <httplib.h>

namespace glmrt::serve {

// `/` (the chat page) and the files it loads under /page/, all public: the
// page asks for the API key itself.
void register_chat_page_routes(httplib::Server& http);

}  // namespace glmrt::serve
