// A chat answer as it is generated, token by token: decoded (never a broken
// UTF-8 character), cut at the first stop string, split into reasoning and
// content, with tool calls held back and parsed at the end. push() returns
// what each token made final, which is what a stream sends; the totals are
// what a non-streamed response holds. Special tokens are skipped (as
// transformers' decode(skip_special_tokens=True) and vLLM do) but for the
// markers a parser reads while it reads them: <think>/</think> during the
// reasoning, the tool-call markers of the model's format (tool_call_syntax.h)
// when tools are parsed.
#pragma once

#include <glmrt/serve/reasoning_splitter.h>
#include <glmrt/serve/stop_strings.h>
#include <glmrt/serve/tool_call_syntax.h>
#include <glmrt/serve/tool_calls.h>
#include <glmrt/text/stream_detokenizer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace glmrt::serve {

class ChatAnswer {
 public:
  /// `tools` = null: no tool calls are parsed. `tokenizer` must outlive this.
  /// `skip_special_tokens` false shows every token's text. Calls are read in
  /// `tool_calls`' format (it must outlive this).
  ChatAnswer(const text::Tokenizer& tokenizer, std::vector<std::string> stop_strings,
             bool starts_in_reasoning, nlohmann::ordered_json tools,
             bool skip_special_tokens = true,
             const ToolCallSyntax& tool_calls = glm_tool_call_syntax());

  ChatDelta push(int32_t token);
  /// A stop string completed: generation should end.
  bool stopped_by_string() const { return stops_.stopped(); }
  /// The stop string that ended the answer (empty when none did).
  const std::string& stop_string() const { return stops_.matched(); }

  struct Ending {
    ChatDelta delta;              // text held back until the end
    std::vector<ToolCall> calls;  // parsed tool calls (their text is not content)
  };
  Ending finish();

  const std::string& reasoning() const { return reasoning_; }
  const std::string& content() const { return content_; }

 private:
  ChatDelta route(std::string_view text);
  bool shown(text::TokenId token) const;

  const text::Tokenizer& tokenizer_;
  bool skip_special_tokens_;
  std::vector<text::TokenId> think_markers_, tool_markers_;  // sorted
  text::StreamDetokenizer detokenizer_;
  StopStringFilter stops_;
  ReasoningSplitter splitter_;
  const ToolCallSyntax& tool_syntax_;
  std::optional<ToolCallCollector> tool_calls_;
  nlohmann::ordered_json tools_;
  std::string reasoning_, content_;
};

}  // namespace glmrt::serve
