// Kimi-K2's tool calls: <|tool_calls_section_begin|>, then per call
// <|tool_call_begin|>ID<|tool_call_argument_begin|>{args}<|tool_call_end|>,
// then <|tool_calls_section_end|>. The ID is `functions.NAME:N` (the model
// is trained to write it so; the function's name is read from it, as vLLM
// does) and becomes the OpenAI call's id. The arguments must be a JSON object.
#include <glmrt/serve/tool_call_json.h>
#include <glmrt/serve/tool_call_syntax.h>

#include "tool_call_text.h"

#include <cctype>

namespace glmrt::serve {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kKimiSectionBegin = "<|tool_calls_section_begin|>";
constexpr std::string_view kKimiSectionEnd = "<|tool_calls_section_end|>";
constexpr std::string_view kKimiCallBegin = "<|tool_call_begin|>";
constexpr std::string_view kKimiArgumentBegin = "<|tool_call_argument_begin|>";
constexpr std::string_view kKimiCallEnd = "<|tool_call_end|>";
constexpr std::string_view kKimiMarkers[] = {kKimiSectionBegin, kKimiSectionEnd, kKimiCallBegin,
                                             kKimiArgumentBegin, kKimiCallEnd};
constexpr std::string_view kKimiFunctionsPrefix = "functions.";

/// The function an id `functions.NAME:N` (or `NAME:N`) names, or "".
std::string kimi_function_of(std::string_view id) {
  const size_t colon = id.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == id.size()) return {};
  for (char c : id.substr(colon + 1))
    if (!std::isdigit(static_cast<unsigned char>(c))) return {};
  std::string_view name = id.substr(0, colon);
  if (name.starts_with(kKimiFunctionsPrefix)) name.remove_prefix(kKimiFunctionsPrefix.size());
  if (name.find_first_of(tool_call_text::kSpace) != std::string_view::npos) return {};
  return std::string(name);
}

class KimiToolCallSyntax final : public ToolCallSyntax {
 public:
  std::string_view name() const override { return "kimi-k2"; }
  std::string_view opening() const override { return kKimiSectionBegin; }
  std::span<const std::string_view> markers() const override { return kKimiMarkers; }

  std::optional<std::vector<ToolCall>> parse(std::string_view text, const Json&,
                                             std::string& trailing) const override {
    using tool_call_text::take;
    std::string_view rest = text;
    if (!take(rest, kKimiSectionBegin)) return std::nullopt;
    std::vector<ToolCall> calls;
    while (take(rest, kKimiCallBegin)) {
      const auto id = tool_call_text::until(rest, kKimiArgumentBegin);
      // An id running into the call's end is a call without arguments.
      if (!id || id->find(kKimiCallEnd) != std::string_view::npos) return std::nullopt;
      const auto arguments = tool_call_text::until(rest, kKimiCallEnd);
      if (!arguments) return std::nullopt;
      ToolCall call;
      call.id = tool_call_text::trim(*id);
      call.name = kimi_function_of(call.id);
      auto object = arguments_object_text(*arguments);
      if (call.name.empty() || !object) return std::nullopt;
      call.arguments = std::move(*object);
      calls.push_back(std::move(call));
    }
    if (calls.empty()) return std::nullopt;
    if (!take(rest, kKimiSectionEnd) && !tool_call_text::blank(rest)) return std::nullopt;
    trailing = tool_call_text::trim(rest);
    return calls;
  }

  std::string forced_opening(std::string_view function) const override {
    return std::string(kKimiSectionBegin) + std::string(kKimiCallBegin) +
           std::string(kKimiFunctionsPrefix) + std::string(function) + ":0" +
           std::string(kKimiArgumentBegin);
  }

  std::string named_function(std::string_view held) const override {
    const size_t begin = held.find(kKimiCallBegin);
    if (begin == std::string_view::npos) return {};
    const std::string_view call = held.substr(begin + kKimiCallBegin.size());
    return kimi_function_of(tool_call_text::trim(call.substr(0, call.find(kKimiArgumentBegin))));
  }

  std::string partial_arguments(std::string_view held, std::string_view,
                                const Json&) const override {
    return tool_call_text::arguments_so_far(held, kKimiArgumentBegin, kKimiCallEnd);
  }
};

}  // namespace

const ToolCallSyntax& kimi_k2_tool_call_syntax() {
  static const KimiToolCallSyntax syntax;
  return syntax;
}

}  // namespace glmrt::serve
