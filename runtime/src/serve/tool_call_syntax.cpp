// Which family's tool-call syntax a model answers in, told by its chat
// template: the one place that knows what identifies each family.
#include <glmrt/serve/tool_call_syntax.h>

#include <array>

namespace glmrt::serve {
namespace {

/// A family and the texts its chat template holds (all of them) when it
/// renders calls in that family's format. Checked in order: the first match
/// wins, so a family whose markers are a subset of another's comes later.
struct ToolCallFamily {
  const ToolCallSyntax& (*syntax)();
  std::array<std::string_view, 2> identified_by;
};

constexpr ToolCallFamily kToolCallFamilies[] = {
    {kimi_k2_tool_call_syntax, {"<|tool_calls_section_begin|>", "<|tool_call_argument_begin|>"}},
    {deepseek_v3_tool_call_syntax, {"<｜tool▁calls▁begin｜>", "```json"}},
    {deepseek_v31_tool_call_syntax, {"<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>"}},
    {glm_tool_call_syntax, {"<tool_call>", "<arg_key>"}},
};

}  // namespace

const ToolCallSyntax& tool_call_syntax_for(std::string_view chat_template_text) {
  for (const ToolCallFamily& family : kToolCallFamilies) {
    bool all = true;
    for (std::string_view marker : family.identified_by)
      all = all && chat_template_text.find(marker) != std::string_view::npos;
    if (all) return family.syntax();
  }
  return glm_tool_call_syntax();
}

const ToolCallSyntax* tool_call_syntax_named(std::string_view name) {
  for (const ToolCallFamily& family : kToolCallFamilies)
    if (family.syntax().name() == name) return &family.syntax();
  return nullptr;
}

}  // namespace glmrt::serve
