#include <glmrt/serve/chat_answer.h>

#include <algorithm>

namespace glmrt::serve {
namespace {

constexpr std::string_view kThinkMarkers[] = {"<think>", "</think>"};

}  // namespace

ChatAnswer::ChatAnswer(const text::Tokenizer& tokenizer, std::vector<std::string> stop_strings,
                       bool starts_in_reasoning, nlohmann::ordered_json tools,
                       bool skip_special_tokens, const ToolCallSyntax& tool_calls)
    : tokenizer_(tokenizer),
      skip_special_tokens_(skip_special_tokens),
      think_markers_(text::special_token_ids(tokenizer, kThinkMarkers)),
      tool_markers_(text::special_token_ids(tokenizer, tool_calls.markers())),
      detokenizer_(tokenizer),
      stops_(std::move(stop_strings)),
      splitter_(starts_in_reasoning),
      tool_syntax_(tool_calls),
      tools_(std::move(tools)) {
  if (!tools_.is_null()) tool_calls_.emplace(tool_syntax_);
}

ChatDelta ChatAnswer::route(std::string_view text) {
  ChatDelta d = splitter_.push(text);
  if (tool_calls_) d.content = tool_calls_->push(d.content);
  reasoning_ += d.reasoning;
  content_ += d.content;
  return d;
}

bool ChatAnswer::shown(text::TokenId token) const {
  if (!skip_special_tokens_ || !tokenizer_.is_special(token)) return true;
  if (splitter_.in_reasoning() &&
      std::binary_search(think_markers_.begin(), think_markers_.end(), token))
    return true;
  return tool_calls_ && std::binary_search(tool_markers_.begin(), tool_markers_.end(), token);
}

ChatDelta ChatAnswer::push(int32_t token) {
  const auto id = static_cast<text::TokenId>(token);
  // A skipped token is left out of the decoded ids, as transformers' decode does.
  if (stops_.stopped() || !shown(id)) return {};
  return route(stops_.push(detokenizer_.push(id)));
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
