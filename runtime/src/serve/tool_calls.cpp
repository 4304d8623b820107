#include <glmrt/serve/held_text.h>
#include <glmrt/serve/request_fields.h>
#include <glmrt/serve/tool_calls.h>

namespace glmrt::serve {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kCallOpen = "<tool_call>", kCallClose = "</tool_call>";
constexpr std::string_view kKeyOpen = "<arg_key>", kKeyClose = "</arg_key>";
constexpr std::string_view kValueOpen = "<arg_value>", kValueClose = "</arg_value>";
constexpr std::string_view kSpace = " \t\r\n";

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// Consumes `token` after optional whitespace.
bool take(std::string_view& rest, std::string_view token) {
  const std::string_view trimmed =
      rest.substr(std::min(rest.find_first_not_of(kSpace), rest.size()));
  if (!trimmed.starts_with(token)) return false;
  rest = trimmed.substr(token.size());
  return true;
}

// Text up to `end` (consumed), or nothing when `end` never comes.
std::optional<std::string_view> until(std::string_view& rest, std::string_view end) {
  const size_t at = rest.find(end);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view before = rest.substr(0, at);
  rest.remove_prefix(at + end.size());
  return before;
}

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
  bool too_deep = false;
  Json parsed = Json::parse(
      raw,
      [&](int depth, Json::parse_event_t, Json&) {
        too_deep = too_deep || depth > kMaxJsonDepth;
        return true;
      },
      false);
  if (parsed.is_discarded() || too_deep) return std::string(raw);
  return parsed;
}

}  // namespace

std::optional<std::vector<ToolCall>> parse_tool_calls(std::string_view text, const Json& tools,
                                                      std::string& trailing) {
  std::vector<ToolCall> calls;
  std::string_view rest = text;
  while (take(rest, kCallOpen)) {
    const auto body = until(rest, kCallClose);
    if (!body) return std::nullopt;
    std::string_view call = *body;
    const size_t key = call.find(kKeyOpen);
    ToolCall parsed;
    parsed.name = trim(call.substr(0, key));
    if (parsed.name.empty()) return std::nullopt;
    call.remove_prefix(key == std::string_view::npos ? call.size() : key);
    Json arguments = Json::object();
    while (take(call, kKeyOpen)) {
      const auto name = until(call, kKeyClose);
      if (!name || !take(call, kValueOpen)) return std::nullopt;
      const auto value = until(call, kValueClose);
      if (!value) return std::nullopt;
      const std::string k(trim(*name));
      arguments[k] = typed_value(*value, declared_type(tools, parsed.name, k));
    }
    if (!trim(call).empty()) return std::nullopt;
    parsed.arguments = arguments.dump();
    calls.push_back(std::move(parsed));
  }
  if (calls.empty()) return std::nullopt;
  trailing = trim(rest);
  return calls;
}

std::string ToolCallCollector::push(std::string_view content) {
  pending_ += content;
  if (collecting_) return {};
  if (const size_t at = pending_.find(kCallOpen); at != std::string::npos) {
    collecting_ = true;
    std::string before = pending_.substr(0, at);
    pending_.erase(0, at);
    return before;
  }
  const size_t hold = partial_marker_length(pending_, kCallOpen);
  std::string ready = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return ready;
}

ToolCallCollector::Result ToolCallCollector::finish(const Json& tools) {
  Result result;
  std::string trailing;
  if (collecting_) {
    if (auto calls = parse_tool_calls(pending_, tools, trailing)) {
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
