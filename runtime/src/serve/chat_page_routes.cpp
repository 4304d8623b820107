#include "chat_page_routes.h"

#include <glmrt/serve/chat_page.h>

namespace glmrt::serve {

void register_chat_page_routes(httplib::Server& http) {
  // The page is read on every visit (its links carry the stamp of the files
  // this binary holds); the files themselves never change under a stamp.
  http.Get("/", [html = stamped_chat_page_html()](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Security-Policy", std::string(kChatPageContentSecurityPolicy));
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(html, "text/html; charset=utf-8");
  });
  for (const PageFile& file : chat_page_files()) {
    // httplib reads a route as a regular expression: its dots are literal.
    std::string pattern;
    for (char c : file.path) pattern += c == '.' ? std::string("\\.") : std::string(1, c);
    http.Get(pattern, [&file](const httplib::Request&, httplib::Response& res) {
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Cache-Control", "public, max-age=31536000, immutable");
      res.set_content(file.body.data(), file.body.size(), std::string(file.content_type));
    });
  }
}

}  // namespace glmrt::serve
