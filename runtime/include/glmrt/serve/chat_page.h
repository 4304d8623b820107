// The chat page served at `/` and the files it loads: its own
// (runtime/src/serve/chat_page.*, chat_send.js, chat_markdown.js,
// chat_store.js) and Debian's marked and highlight.js, each compiled into the
// binary at build time (cmake/embed_file.cmake), so the server needs no
// installed files and the page no network.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace glmrt::serve {

std::string_view chat_page_html();
std::string_view chat_page_css();
std::string_view chat_page_js();
std::string_view chat_send_js();
std::string_view chat_markdown_js();
std::string_view chat_store_js();
std::string_view marked_js();
std::string_view highlight_js();
std::string_view highlight_css();

// A file the page loads, at the path it loads it from.
struct PageFile {
  std::string_view path;
  std::string_view content_type;
  std::string_view body;
};

std::span<const PageFile> chat_page_files();

// The page's HTML with each link to a file stamped `?v=` with a digest of
// every file's bytes: a browser may keep the files for a year and still
// loads the new ones from an upgraded binary.
std::string stamped_chat_page_html();

// What the page may load and run: its own files only, no inline script, no
// other site (so a model's answer could not load or post anything even if
// it reached the page as HTML).
inline constexpr std::string_view kChatPageContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace glmrt::serve
