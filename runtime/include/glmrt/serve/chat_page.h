// The chat page served at `/`: runtime/src/serve/chat_page.html, compiled
// into the binary at build time (cmake/embed_file.cmake), so the server needs
// no installed files and the page no build step.
#pragma once

#include <string_view>

namespace glmrt::serve {

std::string_view chat_page_html();

}  // namespace glmrt::serve
