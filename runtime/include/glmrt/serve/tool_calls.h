// Tool calls parsed back into OpenAI's `tool_calls`: GLM-5's format here,
// every family's behind ToolCallSyntax (tool_call_syntax.h). GLM's chat
// template renders a call as
//   <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>
// (string values raw, others as JSON), and the model answers in that form.
// While an answer streams, content is shown until its family's calls open
// (<tool_call> for GLM); from there the text is kept and parsed when the
// answer ends.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::serve {

struct ToolCall {
  std::string id;  // the call's id when the format carries one (Kimi-K2), else ""
  std::string name;
  std::string arguments;  // a JSON object, as text (OpenAI's `function.arguments`)
};

/// Parses text that starts with "<tool_call>": one or more calls separated by
/// whitespace. A value is typed by the tool's JSON schema in `tools` (the
/// request's tool list): "string" parameters stay strings; others are read as
/// JSON when they parse, else kept as strings. Returns nothing when the text is
/// not well-formed calls (e.g. cut off by max_tokens); `trailing` receives any
/// text after the last call.
std::optional<std::vector<ToolCall>> parse_tool_calls(std::string_view text,
                                                      const nlohmann::ordered_json& tools,
                                                      std::string& trailing);

class ToolCallSyntax;

class ToolCallCollector {
 public:
  /// For GLM-5's format.
  ToolCallCollector();
  /// For `syntax`'s format; it must outlive the collector.
  explicit ToolCallCollector(const ToolCallSyntax& syntax) : syntax_(&syntax) {}

  /// Content that is safe to show; text from the first opening of the calls
  /// (ToolCallSyntax::opening) on is kept.
  std::string push(std::string_view content);

  struct Result {
    std::string content;          // content still to show (kept text that was not calls)
    std::vector<ToolCall> calls;  // empty when none parsed
  };
  /// At the end of the answer.
  Result finish(const nlohmann::ordered_json& tools);

 private:
  const ToolCallSyntax* syntax_;
  std::string pending_;  // held partial opening or, once collecting, the calls
  bool collecting_ = false;
};

}  // namespace glmrt::serve
