#include <glmrt/serve/chat_answer.h>

namespace glmrt::serve {

ChatAnswer::ChatAnswer(const text::Tokenizer& tokenizer, std::vector<std::string> stop_strings,
                       bool starts_in_reasoning, nlohmann::ordered_json tools)
    : detokenizer_(tokenizer),
      stops_(std::move(stop_strings)),
      splitter_(starts_in_reasoning),
      tools_(std::move(tools)) {
  if (!tools_.is_null()) tool_calls_.emplace();
}

ChatDelta ChatAnswer::route(std::string_view text) {
  ChatDelta d = splitter_.push(text);
  if (tool_calls_) d.content = tool_calls_->push(d.content);
  reasoning_ += d.reasoning;
  content_ += d.content;
  return d;
}

ChatDelta ChatAnswer::push(int32_t token) {
  if (stops_.stopped()) return {};
  return route(stops_.push(detokenizer_.push(static_cast<text::TokenId>(token))));
}

ChatAnswer::Ending ChatAnswer::finish() {
  std::string rest;
  if (!stops_.stopped()) {
    rest = stops_.push(detokenizer_.flush());
    if (!stops_.stopped()) rest += stops_.flush();
  }
  Ending ending;
  ending.delta = route(rest);
  const ChatDelta held = splitter_.flush();
  ending.delta.reasoning += held.reasoning;
  reasoning_ += held.reasoning;
  std::string content = held.content;
  if (tool_calls_) {
    content = tool_calls_->push(content);
    ToolCallCollector::Result result = tool_calls_->finish(tools_);
    content += result.content;
    ending.calls = std::move(result.calls);
  }
  ending.delta.content += content;
  content_ += content;
  return ending;
}

}  // namespace glmrt::serve
