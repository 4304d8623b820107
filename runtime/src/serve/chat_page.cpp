#include <glmrt/serve/chat_page.h>

#include <fmt/format.h>

#include <array>
#include <functional>

namespace glmrt::serve {
namespace {

// Not text/javascript: cpp-httplib compresses every text/* response, with
// brotli at its highest quality, on each request (3 s for highlight.js's
// 846 kB). Scripts are sent as they are, once: the browser keeps them.
constexpr std::string_view kJavaScript = "application/javascript; charset=utf-8";
constexpr std::string_view kCss = "text/css; charset=utf-8";

// The placeholder chat_page.html puts where each link's version goes.
constexpr std::string_view kStampPlaceholder = "@STAMP@";

std::string files_digest() {
  size_t digest = std::hash<std::string_view>{}(chat_page_html());
  for (const PageFile& file : chat_page_files())
    digest = digest * 1099511628211u ^ std::hash<std::string_view>{}(file.body);
  return fmt::format("{:016x}", digest);
}

}  // namespace

std::span<const PageFile> chat_page_files() {
  static const std::array files{
      PageFile{"/page/chat_page.css", kCss, chat_page_css()},
      PageFile{"/page/chat_page.js", kJavaScript, chat_page_js()},
      PageFile{"/page/chat_send.js", kJavaScript, chat_send_js()},
      PageFile{"/page/chat_markdown.js", kJavaScript, chat_markdown_js()},
      PageFile{"/page/chat_store.js", kJavaScript, chat_store_js()},
      PageFile{"/page/marked.min.js", kJavaScript, marked_js()},
      PageFile{"/page/highlight.min.js", kJavaScript, highlight_js()},
      PageFile{"/page/highlight.css", kCss, highlight_css()},
  };
  return files;
}

std::string stamped_chat_page_html() {
  const std::string stamp = files_digest();
  std::string html(chat_page_html());
  for (size_t at = html.find(kStampPlaceholder); at != std::string::npos;
       at = html.find(kStampPlaceholder, at + stamp.size()))
    html.replace(at, kStampPlaceholder.size(), stamp);
  return html;
}

}  // namespace glmrt::serve
