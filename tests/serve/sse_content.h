// The content of a streamed chat answer: its server-sent events' deltas
// joined, as a client shows them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace glmrt::test {

inline std::string streamed_chat_content(const std::string& body) {
  std::string content;
  for (size_t at = 0; (at = body.find("data: {", at)) != std::string::npos;) {
    const size_t end = body.find("\n\n", at);
    const nlohmann::json event = nlohmann::json::parse(body.substr(at + 6, end - at - 6));
    if (!event["choices"].empty())
      content += event["choices"][0]["delta"].value("content", std::string());
    at = end;
  }
  return content;
}

}  // namespace glmrt::test
