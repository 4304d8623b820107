// How one model family writes tool calls in its answers, and reading them
// back into OpenAI's `tool_calls`. Each family's chat template renders an
// assistant's calls in its own format, and the model answers in that form:
//   GLM-5         <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>
//   DeepSeek-V3   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name
//   (and R1)      ```json\n{...}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//   DeepSeek-V3.1 <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}
//   (and V3.2)    <｜tool▁call▁end｜><｜tool▁calls▁end｜>
//   Kimi-K2       <|tool_calls_section_begin|><|tool_call_begin|>functions.name:0
//                 <|tool_call_argument_begin|>{...}<|tool_call_end|><|tool_calls_section_end|>
// The family is chosen once per model from its chat template
// (tool_call_syntax_for); serve never matches a family's markers itself.
#pragma once

#include <glmrt/serve/tool_calls.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::serve {

class ToolCallSyntax {
 public:
  virtual ~ToolCallSyntax() = default;

  /// "glm", "deepseek-v3", "deepseek-v3.1" or "kimi-k2".
  virtual std::string_view name() const = 0;
  /// The text that opens an answer's calls: content before it is shown, from
  /// it on the answer is held and parsed when it ends.
  virtual std::string_view opening() const = 0;
  /// Every marker of the format (special tokens in these models' vocabularies:
  /// an answer's parser must see them, so they are not skipped as special).
  virtual std::span<const std::string_view> markers() const = 0;
  /// Parses text that starts with opening(): one or more calls. Nothing when it
  /// is not well-formed calls (cut off by max_tokens, arguments that are not a
  /// JSON object, ...): the caller shows it as text. `trailing` receives the
  /// text after the calls. `tools` (the request's tool list) types GLM's values.
  virtual std::optional<std::vector<ToolCall>> parse(std::string_view text,
                                                     const nlohmann::ordered_json& tools,
                                                     std::string& trailing) const = 0;
  /// What an answer forced to call `function` starts with (tool_choice).
  virtual std::string forced_opening(std::string_view function) const = 0;
  /// The function a call that did not parse names (held text from opening()
  /// on), or "" when it names none yet.
  virtual std::string named_function(std::string_view held) const = 0;
  /// The arguments of the first call in `held` (text from opening() on) that
  /// did not parse, as far as they were written (an answer cut by max_tokens):
  /// the JSON text the model wrote so far (JSON formats), or the complete
  /// key/value pairs and the cut one's text (GLM), typed by `function`'s
  /// declaration in `tools`. "{}" when none were written.
  virtual std::string partial_arguments(std::string_view held, std::string_view function,
                                        const nlohmann::ordered_json& tools) const = 0;
};

const ToolCallSyntax& glm_tool_call_syntax();
const ToolCallSyntax& deepseek_v3_tool_call_syntax();
const ToolCallSyntax& deepseek_v31_tool_call_syntax();
const ToolCallSyntax& kimi_k2_tool_call_syntax();

/// The syntax a model's chat template writes calls in: the first family
/// whose identifying markers all occur in `chat_template_text` (Kimi-K2's
/// section markers; DeepSeek's call markers with a fenced ```json block: V3
/// and R1; without: V3.1 and V3.2), else GLM-5's (also for the built-in
/// template, whose text is empty).
const ToolCallSyntax& tool_call_syntax_for(std::string_view chat_template_text);
/// By name(); nullptr for an unknown name.
const ToolCallSyntax* tool_call_syntax_named(std::string_view name);

}  // namespace glmrt::serve
