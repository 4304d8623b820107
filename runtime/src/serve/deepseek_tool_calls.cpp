// DeepSeek's tool calls. Both generations wrap the answer's calls in
// <｜tool▁calls▁begin｜> ... <｜tool▁calls▁end｜>, each call in
// <｜tool▁call▁begin｜> ... <｜tool▁call▁end｜>; inside a call V3 and R1 write
// `type<｜tool▁sep｜>name\n```json\n{args}\n````, V3.1 and V3.2
// `name<｜tool▁sep｜>{args}`. The arguments must be a JSON object.
#include <glmrt/serve/tool_call_json.h>
#include <glmrt/serve/tool_call_syntax.h>

#include "tool_call_text.h"

namespace glmrt::serve {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kDeepseekCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDeepseekCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepseekCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDeepseekCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kDeepseekSep = "<｜tool▁sep｜>";
constexpr std::string_view kDeepseekMarkers[] = {
    kDeepseekCallsBegin, kDeepseekCallsEnd, kDeepseekCallBegin, kDeepseekCallEnd, kDeepseekSep};
constexpr std::string_view kJsonFenceOpen = "```json", kJsonFenceClose = "```";

/// The two DeepSeek layouts of one call's body (between call begin and end).
enum class DeepseekLayout { fenced_json, plain_json };

std::optional<ToolCall> deepseek_call(std::string_view body, DeepseekLayout layout) {
  using tool_call_text::trim;
  const size_t sep = body.find(kDeepseekSep);
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view before = body.substr(0, sep),
                         after = body.substr(sep + kDeepseekSep.size());
  ToolCall call;
  std::string_view arguments;
  if (layout == DeepseekLayout::plain_json) {
    call.name = trim(before);
    arguments = after;
  } else {
    // `type<｜tool▁sep｜>name\n```json\n{...}\n```` (type: "function").
    if (trim(before).empty()) return std::nullopt;
    const size_t line_end = after.find('\n');
    if (line_end == std::string_view::npos) return std::nullopt;
    call.name = trim(after.substr(0, line_end));
    std::string_view fenced = trim(after.substr(line_end + 1));
    if (!fenced.starts_with(kJsonFenceOpen) || !fenced.ends_with(kJsonFenceClose) ||
        fenced.size() < kJsonFenceOpen.size() + kJsonFenceClose.size())
      return std::nullopt;
    arguments = fenced.substr(kJsonFenceOpen.size(),
                              fenced.size() - kJsonFenceOpen.size() - kJsonFenceClose.size());
  }
  if (call.name.empty() || call.name.find_first_of(tool_call_text::kSpace) != std::string::npos)
    return std::nullopt;
  auto text = arguments_object_text(arguments);
  if (!text) return std::nullopt;
  call.arguments = std::move(*text);
  return call;
}

class DeepseekToolCallSyntax final : public ToolCallSyntax {
 public:
  DeepseekToolCallSyntax(std::string_view name, DeepseekLayout layout)
      : name_(name), layout_(layout) {}

  std::string_view name() const override { return name_; }
  std::string_view opening() const override { return kDeepseekCallsBegin; }
  std::span<const std::string_view> markers() const override { return kDeepseekMarkers; }

  std::optional<std::vector<ToolCall>> parse(std::string_view text, const Json&,
                                             std::string& trailing) const override {
    using tool_call_text::take;
    std::string_view rest = text;
    if (!take(rest, kDeepseekCallsBegin)) return std::nullopt;
    std::vector<ToolCall> calls;
    while (take(rest, kDeepseekCallBegin)) {
      const auto body = tool_call_text::until(rest, kDeepseekCallEnd);
      if (!body) return std::nullopt;
      auto call = deepseek_call(*body, layout_);
      if (!call) return std::nullopt;
      calls.push_back(std::move(*call));
    }
    if (calls.empty()) return std::nullopt;
    // The section's end may be missing when the answer ended right after the
    // last call; anything else there is not a call.
    if (!take(rest, kDeepseekCallsEnd) && !tool_call_text::blank(rest)) return std::nullopt;
    trailing = tool_call_text::trim(rest);
    return calls;
  }

  std::string forced_opening(std::string_view function) const override {
    std::string text = std::string(kDeepseekCallsBegin) + std::string(kDeepseekCallBegin);
    if (layout_ == DeepseekLayout::fenced_json)
      return text + "function" + std::string(kDeepseekSep) + std::string(function) + "\n" +
             std::string(kJsonFenceOpen) + "\n";
    return text + std::string(function) + std::string(kDeepseekSep);
  }

  std::string named_function(std::string_view held) const override {
    const size_t begin = held.find(kDeepseekCallBegin);
    if (begin == std::string_view::npos) return {};
    std::string_view call = held.substr(begin + kDeepseekCallBegin.size());
    const size_t sep = call.find(kDeepseekSep);
    if (layout_ == DeepseekLayout::plain_json)
      return std::string(tool_call_text::trim(call.substr(0, sep)));
    if (sep == std::string_view::npos) return {};
    call.remove_prefix(sep + kDeepseekSep.size());
    return std::string(tool_call_text::trim(call.substr(0, call.find('\n'))));
  }

  std::string partial_arguments(std::string_view held, std::string_view,
                                const Json&) const override {
    const size_t begin = held.find(kDeepseekCallBegin);
    if (begin == std::string_view::npos) return "{}";
    held.remove_prefix(begin);
    held = held.substr(0, held.find(kDeepseekCallEnd));
    if (layout_ == DeepseekLayout::plain_json)
      return tool_call_text::arguments_so_far(held, kDeepseekSep, kDeepseekCallEnd);
    const size_t sep = held.find(kDeepseekSep);
    if (sep == std::string_view::npos) return "{}";
    held.remove_prefix(sep);
    return tool_call_text::arguments_so_far(held, kJsonFenceOpen,
                                            "\n" + std::string(kJsonFenceClose));
  }

 private:
  std::string_view name_;
  DeepseekLayout layout_;
};

}  // namespace

const ToolCallSyntax& deepseek_v3_tool_call_syntax() {
  static const DeepseekToolCallSyntax syntax("deepseek-v3", DeepseekLayout::fenced_json);
  return syntax;
}

const ToolCallSyntax& deepseek_v31_tool_call_syntax() {
  static const DeepseekToolCallSyntax syntax("deepseek-v3.1", DeepseekLayout::plain_json);
  return syntax;
}

}  // namespace glmrt::serve
