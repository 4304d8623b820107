// GLM-5's tool calls, and the collector that holds an answer's calls while
// it streams (whatever the family).
#include <glmrt/serve/held_text.h>
#include <glmrt/serve/tool_call_json.h>
#include <glmrt/serve/tool_call_syntax.h>
#include <glmrt/serve/tool_calls.h>

#include "tool_call_text.h"

namespace glmrt::serve {
namespace {

using Json = nlohmann::ordered_json;
using tool_call_text::take;
using tool_call_text::trim;
using tool_call_text::until;

constexpr std::string_view kGlmCallOpen = "<tool_call>", kGlmCallClose = "</tool_call>";
constexpr std::string_view kGlmKeyOpen = "<arg_key>", kGlmKeyClose = "</arg_key>";
constexpr std::string_view kGlmValueOpen = "<arg_value>", kGlmValueClose = "</arg_value>";
constexpr std::string_view kGlmMarkers[] = {kGlmCallOpen, kGlmCallClose, kGlmKeyOpen,
                                            kGlmKeyClose, kGlmValueOpen, kGlmValueClose};

// The declared JSON type of parameter `key` of tool `name`, or "".
std::string declared_type(const Json& tools, std::string_view name, std::string_view key) {
  if (!tools.is_array()) return {};
  for (const Json& entry : tools) {
    const Json& tool = entry.is_object() && entry.contains("function") ? entry["function"] : entry;
    if (!tool.is_object() || !tool.contains("name") || !tool["name"].is_string() ||
        tool["name"].get_ref<const std::string&>() != name)
      continue;
    const Json* type = nullptr;
    if (tool.contains("parameters") && tool["parameters"].is_object() &&
        tool["parameters"].contains("properties") && tool["parameters"]["properties"].is_object() &&
        tool["parameters"]["properties"].contains(key)) {
      const Json& property = tool["parameters"]["properties"][std::string(key)];
      if (property.is_object() && property.contains("type")) type = &property["type"];
    }
    return type && type->is_string() ? type->get<std::string>() : std::string();
  }
  return {};
}

Json typed_value(std::string_view raw, const std::string& type) {
  if (type == "string") return std::string(raw);
  // Model output is untrusted: deeper than a request body may be, it stays text.
  if (auto parsed = parse_model_json(raw)) return std::move(*parsed);
  return std::string(raw);
}

class GlmToolCallSyntax final : public ToolCallSyntax {
 public:
  std::string_view name() const override { return "glm"; }
  std::string_view opening() const override { return kGlmCallOpen; }
  std::span<const std::string_view> markers() const override { return kGlmMarkers; }
  std::optional<std::vector<ToolCall>> parse(std::string_view text, const Json& tools,
                                             std::string& trailing) const override {
    return parse_tool_calls(text, tools, trailing);
  }
  std::string forced_opening(std::string_view function) const override {
    return std::string(kGlmCallOpen) + std::string(function);
  }
  std::string named_function(std::string_view held) const override {
    const size_t at = held.find(kGlmCallOpen);
    if (at == std::string_view::npos) return {};
    const std::string_view after = held.substr(at + kGlmCallOpen.size());
    return std::string(after.substr(0, after.find_first_of("< \t\r\n")));
  }
  std::string partial_arguments(std::string_view held, std::string_view function,
                                const Json& tools) const override {
    // Pairs up to the first that is malformed or cut; a cut value keeps its
    // text so far (as a string: its JSON may be incomplete).
    Json arguments = Json::object();
    const size_t first = held.find(kGlmKeyOpen);
    std::string_view call = held.substr(std::min(first, held.size()));
    call = call.substr(0, call.find(kGlmCallClose));
    while (take(call, kGlmKeyOpen)) {
      const auto key = until(call, kGlmKeyClose);
      if (!key || !take(call, kGlmValueOpen)) break;
      const std::string k(trim(*key));
      if (const auto value = until(call, kGlmValueClose)) {
        arguments[k] = typed_value(*value, declared_type(tools, function, k));
        continue;
      }
      arguments[k] = std::string(call);
      break;
    }
    return arguments.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
};

}  // namespace

const ToolCallSyntax& glm_tool_call_syntax() {
  static const GlmToolCallSyntax syntax;
  return syntax;
}

std::optional<std::vector<ToolCall>> parse_tool_calls(std::string_view text, const Json& tools,
                                                      std::string& trailing) {
  std::vector<ToolCall> calls;
  std::string_view rest = text;
  while (take(rest, kGlmCallOpen)) {
    const auto body = until(rest, kGlmCallClose);
    if (!body) return std::nullopt;
    std::string_view call = *body;
    const size_t key = call.find(kGlmKeyOpen);
    ToolCall parsed;
    parsed.name = trim(call.substr(0, key));
    if (parsed.name.empty()) return std::nullopt;
    call.remove_prefix(key == std::string_view::npos ? call.size() : key);
    Json arguments = Json::object();
    while (take(call, kGlmKeyOpen)) {
      const auto name = until(call, kGlmKeyClose);
      if (!name || !take(call, kGlmValueOpen)) return std::nullopt;
      const auto value = until(call, kGlmValueClose);
      if (!value) return std::nullopt;
      const std::string k(trim(*name));
      arguments[k] = typed_value(*value, declared_type(tools, parsed.name, k));
    }
    if (!trim(call).empty()) return std::nullopt;
    // A model can emit bytes that are not UTF-8 inside a value: replaced (U+FFFD), not thrown.
    parsed.arguments = arguments.dump(-1, ' ', false, Json::error_handler_t::replace);
    calls.push_back(std::move(parsed));
  }
  if (calls.empty()) return std::nullopt;
  trailing = trim(rest);
  return calls;
}

ToolCallCollector::ToolCallCollector() : ToolCallCollector(glm_tool_call_syntax()) {}

std::string ToolCallCollector::push(std::string_view content) {
  pending_ += content;
  if (collecting_) return {};
  const std::string_view opening = syntax_->opening();
  if (const size_t at = pending_.find(opening); at != std::string::npos) {
    collecting_ = true;
    std::string before = pending_.substr(0, at);
    pending_.erase(0, at);
    return before;
  }
  const size_t hold = partial_marker_length(pending_, opening);
  std::string ready = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return ready;
}

ToolCallCollector::Result ToolCallCollector::finish(const Json& tools) {
  Result result;
  std::string trailing;
  if (collecting_) {
    if (auto calls = syntax_->parse(pending_, tools, trailing)) {
      result.calls = std::move(*calls);
      result.content = std::move(trailing);
      pending_.clear();
      return result;
    }
  }
  result.content = std::exchange(pending_, {});
  return result;
}

}  // namespace glmrt::serve
