#include <glmrt/base/printable.h>
#include <glmrt/serve/request_keys.h>

#include <glmrt/serve/responses_request.h>
#include "translated_fields.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace glmrt::serve {
namespace {

constexpr std::string_view kResponsesPath = "/v1/responses";

constexpr std::string_view kResponsesFields[] = {"model",
                                                 "input",
                                                 "instructions",
                                                 "tools",
                                                 "tool_choice",
                                                 "max_output_tokens",
                                                 "temperature",
                                                 "top_p",
                                                 "reasoning",
                                                 "text",
                                                 "stream",
                                                 "store",
                                                 "previous_response_id",
                                                 "conversation",
                                                 "parallel_tool_calls",
                                                 "metadata",
                                                 "user",
                                                 "safety_identifier",
                                                 "service_tier",
                                                 "prompt_cache_key",
                                                 "include",
                                                 "truncation",
                                                 "background"};

// What a response object repeats of its request, as OpenAI's does.
constexpr const char* kSettings[] = {"instructions",
                                     "max_output_tokens",
                                     "parallel_tool_calls",
                                     "reasoning",
                                     "temperature",
                                     "text",
                                     "tool_choice",
                                     "tools",
                                     "top_p",
                                     "metadata"};

// A message's content: a string, or text parts (input_text from the user,
// output_text from the assistant).
std::string text_of_parts(const Json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    bad_request(where, "`{}` must be a string or a list of content parts", where);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string at = fmt::format("{}[{}]", where, i);
    const std::string type = type_of(part);
    if (type != "input_text" && type != "output_text")
      bad_request(at, "`{}` is a `{}` part: this model reads input_text and output_text parts only",
                  at, type.empty() ? "untyped" : printable(type, 64));
    // output_text's annotations and logprobs are what an earlier answer carried.
    constexpr std::string_view known[] = {"type", "text", "annotations", "logprobs"};
    refuse_fields_outside(part, known, at, at + ".");
    text += required_string(part, "text", at);
  }
  return text;
}

class InputReader {
 public:
  explicit InputReader(Json& messages) : messages_(messages) {}

  void item(const Json& item, size_t index) {
    const std::string where = fmt::format("input[{}]", index);
    if (!item.is_object()) bad_request(where, "`{}` must be an object", where);
    const std::string type = type_of(item);
    if (type.empty() || type == "message") {
      message(item, where);
    } else if (type == "function_call") {
      constexpr std::string_view known[] = {"type", "id", "call_id", "name", "arguments", "status"};
      refuse_fields_outside(item, known, where, where + ".");
      Json call = {{"id", required_string(item, "call_id", where)},
                   {"type", "function"},
                   {"function",
                    {{"name", required_string(item, "name", where)},
                     {"arguments", required_string(item, "arguments", where)}}}};
      assistant()["tool_calls"].push_back(std::move(call));
    } else if (type == "function_call_output") {
      constexpr std::string_view known[] = {"type", "id", "call_id", "output", "status"};
      refuse_fields_outside(item, known, where, where + ".");
      if (!item.contains("output"))
        bad_request(where + ".output", "`{}.output` is required", where);
      messages_.push_back({{"role", "tool"},
                           {"tool_call_id", required_string(item, "call_id", where)},
                           {"content", text_of_parts(item["output"], where + ".output")}});
    } else if (type == "reasoning") {
      // An earlier answer's reasoning, read back as that answer's reasoning_content.
      constexpr std::string_view known[] = {"type", "id", "summary", "content", "status"};
      refuse_fields_outside(item, known, where, where + ".");
      reasoning_at_ = where;
      for (const char* key : {"summary", "content"}) {
        if (!item.contains(key) || item[key].is_null()) continue;
        if (!item[key].is_array())
          bad_request(where + "." + key, "`{}.{}` must be a list of text parts", where, key);
        for (size_t i = 0; i < item[key].size(); ++i) {
          const Json& part = item[key][i];
          const std::string at = fmt::format("{}.{}[{}]", where, key, i);
          constexpr std::string_view part_keys[] = {"type", "text"};
          refuse_fields_outside(part, part_keys, at, at + ".");
          reasoning_ += required_string(part, "text", at);
        }
      }
    } else {
      bad_request(where + ".type",
                  "`{}.type` is `{}`: input items may be message, function_call, "
                  "function_call_output or reasoning",
                  where, printable(type, 64));
    }
  }

  // A reasoning item belongs to the assistant output that follows it.
  void finish() {
    if (!reasoning_.empty())
      bad_request(reasoning_at_,
                  "`{}` is a reasoning item no assistant message or function_call follows",
                  reasoning_at_);
  }

 private:
  void message(const Json& item, const std::string& where) {
    constexpr std::string_view known[] = {"type", "id", "role", "content", "status"};
    refuse_fields_outside(item, known, where, where + ".");
    std::string role = item.contains("role") && item["role"].is_string()
                           ? item["role"].get<std::string>()
                           : std::string();
    if (role != "user" && role != "assistant" && role != "system" && role != "developer")
      bad_request(where + ".role", "`{}.role` must be one of user, assistant, system, developer",
                  where);
    if (role == "developer") role = "system";
    if (!item.contains("content"))
      bad_request(where + ".content", "`{}.content` is required", where);
    std::string text = text_of_parts(item["content"], where + ".content");
    if (role == "assistant") {
      Json& message = assistant();
      message["content"] = message["content"].get<std::string>() + text;
      return;
    }
    messages_.push_back({{"role", role}, {"content", std::move(text)}});
  }

  // The assistant message items continue: a function_call or text after an
  // assistant message (or reasoning) is part of the same turn.
  Json& assistant() {
    if (messages_.empty() || messages_.back()["role"] != "assistant" || !reasoning_.empty())
      messages_.push_back({{"role", "assistant"}, {"content", ""}});
    Json& message = messages_.back();
    if (!reasoning_.empty()) message["reasoning_content"] = std::exchange(reasoning_, {});
    if (!message.contains("tool_calls")) message["tool_calls"] = Json::array();
    return message;
  }

  Json& messages_;
  std::string reasoning_;  // read, waiting for the assistant message it belongs to
  std::string reasoning_at_;
};

Json function_tools(const Json& tools) {
  if (!tools.is_array()) bad_request("tools", "`tools` must be a list of tool definitions");
  Json chat = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& tool = tools[i];
    const std::string where = fmt::format("tools[{}]", i);
    if (!tool.is_object()) bad_request(where, "`{}` must be an object", where);
    const std::string type = type_of(tool);
    if (type != "function")
      bad_request(where + ".type",
                  "`{}.type` is `{}`: this server runs function tools only ({{\"type\": "
                  "\"function\", \"name\", \"description\", \"parameters\"}})",
                  where, type.empty() ? "missing" : printable(type, 64));
    constexpr std::string_view known[] = {"type", "name", "description", "parameters", "strict"};
    refuse_fields_outside(tool, known, where, where + ".");
    Json function = {{"name", required_string(tool, "name", where)}};
    for (const char* key : {"description", "parameters", "strict"})
      if (tool.contains(key) && !tool[key].is_null()) function[key] = tool[key];
    chat.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return chat;
}

Json chat_tool_choice(const Json& choice) {
  if (choice.is_string()) {
    if (choice != "auto" && choice != "none" && choice != "required")
      bad_request("tool_choice",
                  "`tool_choice` must be \"auto\", \"none\", \"required\" or "
                  "{{\"type\": \"function\", \"name\": ...}}");
    return choice;
  }
  if (type_of(choice) != "function")
    bad_request("tool_choice",
                "`tool_choice` must be \"auto\", \"none\", \"required\" or "
                "{{\"type\": \"function\", \"name\": ...}}");
  constexpr std::string_view known[] = {"type", "name"};
  refuse_fields_outside(choice, known, "tool_choice", "tool_choice.");
  return {{"type", "function"},
          {"function", {{"name", required_string(choice, "name", "tool_choice")}}}};
}

// reasoning {effort, summary}: effort "none" turns thinking off; other
// efforts go to the chat template as reasoning_effort (as the chat
// endpoint's). The summary is always the whole reasoning.
void read_reasoning(const Json& reasoning, Json& chat) {
  if (!reasoning.is_object()) bad_request("reasoning", "`reasoning` must be an object");
  constexpr std::string_view known[] = {"effort", "summary", "generate_summary"};
  refuse_fields_outside(reasoning, known, "reasoning", "reasoning.");
  const RequestFields f(reasoning, "reasoning.");
  if (const auto summary = f.string("summary"))
    if (*summary != "auto" && *summary != "concise" && *summary != "detailed")
      bad_request("reasoning.summary", "`reasoning.summary` must be auto, concise or detailed");
  (void)f.string("generate_summary");
  const auto effort = f.string("effort");
  if (!effort) return;
  constexpr std::string_view kEfforts[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
  if (std::find(std::begin(kEfforts), std::end(kEfforts), *effort) == std::end(kEfforts))
    bad_request("reasoning.effort",
                "`reasoning.effort` must be none, minimal, low, medium, high or xhigh");
  if (*effort == "none") {
    chat["enable_thinking"] = false;
  } else {
    chat["reasoning_effort"] = *effort;
  }
}

// text {format}: text, json_object or json_schema {name, schema, strict,
// description}, as response_format asks it of the chat endpoint.
void read_text(const Json& text, Json& chat) {
  if (!text.is_object()) bad_request("text", "`text` must be an object");
  constexpr std::string_view known[] = {"format"};
  refuse_fields_outside(text, known, "text", "text.");
  if (!text.contains("format") || text["format"].is_null()) return;
  const Json& format = text["format"];
  const std::string type = type_of(format);
  if (type == "text" || type == "json_object") {
    constexpr std::string_view keys[] = {"type"};
    refuse_fields_outside(format, keys, "text.format", "text.format.");
    chat["response_format"] = {{"type", type}};
    return;
  }
  if (type != "json_schema")
    bad_request("text.format", "`text.format.type` must be text, json_object or json_schema");
  constexpr std::string_view keys[] = {"type", "name", "schema", "strict", "description"};
  refuse_fields_outside(format, keys, "text.format", "text.format.");
  Json spec = format;
  spec.erase("type");
  chat["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(spec)}};
}

void refuse_state(const RequestFields& f) {
  if (f.boolean("store").value_or(false))
    bad_request("store",
                "`store: true` is not supported: this server keeps no responses "
                "(send `store: false`, and the whole conversation as `input`)");
  for (const char* key : {"previous_response_id", "conversation"})
    if (f.has(key))
      bad_request(key,
                  "`{}` is not supported: this server keeps no responses; send the whole "
                  "conversation as `input`",
                  key);
  if (f.boolean("background").value_or(false))
    bad_request("background",
                "`background: true` is not supported: responses are answered "
                "while the client waits");
  if (const Json* include = f.get("include");
      include && (!include->is_array() || !include->empty()))
    bad_request("include", "`include` is not supported (it would add nothing): leave it out");
  if (const auto truncation = f.string("truncation"); truncation && *truncation != "disabled")
    bad_request("truncation",
                "`truncation` must be \"disabled\": a conversation longer than the "
                "context is refused, not cut");
  for (const char* key : {"model", "user", "safety_identifier", "service_tier", "prompt_cache_key"})
    (void)f.string(key);  // no effect here, as on the chat endpoint
  if (const Json* metadata = f.get("metadata"); metadata && !metadata->is_object())
    bad_request("metadata", "`metadata` must be an object");
}

}  // namespace

Json chat_body_of_responses(const Json& body) {
  refuse_fields_outside(body, kResponsesFields, kResponsesPath);
  const RequestFields f(body);
  refuse_state(f);
  Json chat = Json::object();
  for (const char* key : {"stream", "temperature", "top_p", "parallel_tool_calls"})
    if (const Json* value = f.get(key)) chat[key] = *value;
  if (const auto max = f.integer("max_output_tokens", 1, std::numeric_limits<int64_t>::max()))
    chat["max_tokens"] = *max;
  Json messages = Json::array();
  if (const auto instructions = f.string("instructions"))
    messages.push_back({{"role", "system"}, {"content", *instructions}});
  const Json* input = f.get("input");
  if (!input) bad_request("input", "`input` is required: text, or a list of input items");
  if (input->is_string()) {
    messages.push_back({{"role", "user"}, {"content", *input}});
  } else if (input->is_array() && !input->empty()) {
    InputReader reader(messages);
    for (size_t i = 0; i < input->size(); ++i) reader.item((*input)[i], i);
    reader.finish();
  } else {
    bad_request("input", "`input` must be text or a non-empty list of input items");
  }
  // Assistant messages without calls carry none (the chat template would show an empty list).
  for (Json& m : messages)
    if (m.contains("tool_calls") && m["tool_calls"].empty()) m.erase("tool_calls");
  chat["messages"] = std::move(messages);
  if (const Json* tools = f.get("tools")) chat["tools"] = function_tools(*tools);
  if (const Json* choice = f.get("tool_choice")) chat["tool_choice"] = chat_tool_choice(*choice);
  if (const Json* reasoning = f.get("reasoning")) read_reasoning(*reasoning, chat);
  if (const Json* text = f.get("text")) read_text(*text, chat);
  return chat;
}

ResponsesRequest parse_responses_request(const Json& body, const RequestContext& context) {
  ResponsesRequest r;
  r.chat = parse_chat_request(chat_body_of_responses(body), context);
  r.settings = Json::object();
  for (const char* key : kSettings)
    r.settings[key] = body.contains(key) ? body[key] : Json(nullptr);
  return r;
}

}  // namespace glmrt::serve
