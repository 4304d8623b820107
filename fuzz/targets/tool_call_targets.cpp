// A model's answer read for tool calls, as `glmrt serve` reads it: the first
// byte picks the family's syntax, the rest is the answer, parsed whole and
// streamed through the collector in two pieces (the second byte sets the
// split). Model output is untrusted: whatever it holds, the parse ends, calls
// carry a name and a JSON object as arguments, and an answer that is not
// calls comes back as content byte for byte.
#include <glmrt/serve/tool_call_json.h>
#include <glmrt/serve/tool_call_syntax.h>
#include <glmrt/serve/tool_calls.h>

#include <nlohmann/json.hpp>

#include <array>

#include "fuzz_targets.h"

namespace glmrt::fuzz {

int fuzz_tool_calls(Input input, const ScratchDir&) {
  if (input.size() < 2) return 0;
  const std::array<const serve::ToolCallSyntax*, 4> families = {
      &serve::glm_tool_call_syntax(), &serve::deepseek_v3_tool_call_syntax(),
      &serve::deepseek_v31_tool_call_syntax(), &serve::kimi_k2_tool_call_syntax()};
  const serve::ToolCallSyntax& syntax = *families[input[0] % families.size()];
  const std::string_view answer = as_text(input.subspan(2));
  const nlohmann::ordered_json tools;

  std::string trailing;
  const auto calls = syntax.parse(answer, tools, trailing);
  if (calls) {
    expect(!calls->empty(), "parsed calls are at least one");
    for (const serve::ToolCall& call : *calls) {
      expect(!call.name.empty(), "a parsed call has a name");
      const auto arguments = serve::parse_model_json(call.arguments);
      expect(arguments && arguments->is_object(), "a call's arguments are a JSON object");
    }
  }

  const size_t split = std::min<size_t>(input[1], answer.size());
  serve::ToolCallCollector collector(syntax);
  std::string shown = collector.push(answer.substr(0, split));
  shown += collector.push(answer.substr(split));
  const serve::ToolCallCollector::Result result = collector.finish(tools);
  shown += result.content;
  if (result.calls.empty())
    expect(shown == answer, "an answer without calls is shown whole");
  else
    expect(shown.size() < answer.size(), "the calls' text is not shown");
  syntax.named_function(answer);
  return 0;
}

}  // namespace glmrt::fuzz
