#include <glmrt/base/printable.h>
#include <glmrt/serve/messages_request.h>
#include <glmrt/serve/request_keys.h>

#include "translated_fields.h"

namespace glmrt::serve {
namespace {

constexpr std::string_view kMessagesPath = "/v1/messages";

constexpr std::string_view kMessagesFields[] = {
    "model",    "max_tokens",   "messages",      "system",       "stop_sequences", "stream",
    "metadata", "temperature",  "top_p",         "top_k",        "tools",          "tool_choice",
    "thinking", "service_tier", "cache_control", "output_config"};

// cache_control marks where Anthropic caches a prefix; this server caches
// every prefix anyway, so it is accepted (its shape still checked).
void check_cache_control(const Json& block, const std::string& where) {
  if (!block.contains("cache_control") || block["cache_control"].is_null()) return;
  if (!block["cache_control"].is_object())
    bad_request(where + ".cache_control", "`{}.cache_control` must be an object", where);
}

// A text block's text (its citations are refused: none are checked here).
std::string text_block(const Json& block, const std::string& where) {
  constexpr std::string_view known[] = {"type", "text", "cache_control", "citations"};
  refuse_fields_outside(block, known, where, where + ".");
  if (block.contains("citations") && !block["citations"].is_null())
    bad_request(where + ".citations", "`{}.citations` is not supported", where);
  check_cache_control(block, where);
  return required_string(block, "text", where);
}

// The text of text blocks, as system prompts and tool results hold them.
std::string text_of_blocks(const Json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    bad_request(where, "`{}` must be a string or a list of text blocks", where);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    const std::string type = type_of(content[i]);
    if (type != "text")
      bad_request(at, "`{}` is a `{}` block: only text blocks are read here", at,
                  type.empty() ? "untyped" : printable(type, 64));
    if (!text.empty()) text += "\n";
    text += text_block(content[i], at);
  }
  return text;
}

Json tool_call_of(const Json& block, const std::string& where) {
  constexpr std::string_view known[] = {"type", "id", "name", "input", "cache_control"};
  refuse_fields_outside(block, known, where, where + ".");
  check_cache_control(block, where);
  const Json input = block.contains("input") ? block["input"] : Json::object();
  if (!input.is_object()) bad_request(where + ".input", "`{}.input` must be an object", where);
  return {
      {"id", required_string(block, "id", where)},
      {"type", "function"},
      {"function", {{"name", required_string(block, "name", where)}, {"arguments", input.dump()}}}};
}

Json tool_result_of(const Json& block, const std::string& where) {
  constexpr std::string_view known[] = {"type", "tool_use_id", "content", "is_error",
                                        "cache_control"};
  refuse_fields_outside(block, known, where, where + ".");
  check_cache_control(block, where);
  std::string text = block.contains("content") && !block["content"].is_null()
                         ? text_of_blocks(block["content"], where + ".content")
                         : std::string();
  const Json* is_error = block.contains("is_error") ? &block["is_error"] : nullptr;
  if (is_error && !is_error->is_null() && !is_error->is_boolean())
    bad_request(where + ".is_error", "`{}.is_error` must be true or false", where);
  // The chat template has no place for a failed call: the model reads it in the result.
  if (is_error && is_error->is_boolean() && is_error->get<bool>()) text = "Error: " + text;
  return {{"role", "tool"},
          {"tool_call_id", required_string(block, "tool_use_id", where)},
          {"content", std::move(text)}};
}

// One Anthropic message as chat messages: a user message's tool results
// become tool messages (before its text, as they answer the previous turn).
void append_message(const Json& message, size_t index, Json& chat) {
  const std::string where = fmt::format("messages[{}]", index);
  if (!message.is_object()) bad_request(where, "`{}` must be an object", where);
  constexpr std::string_view known[] = {"role", "content"};
  refuse_fields_outside(message, known, where, where + ".");
  const std::string role = message.contains("role") && message["role"].is_string()
                               ? message["role"].get<std::string>()
                               : std::string();
  if (role != "user" && role != "assistant")
    bad_request(where + ".role", "`{}.role` must be \"user\" or \"assistant\"", where);
  if (!message.contains("content"))
    bad_request(where + ".content", "`{}.content` is required", where);
  const Json& content = message["content"];
  if (content.is_string()) {
    chat.push_back({{"role", role}, {"content", content}});
    return;
  }
  if (!content.is_array())
    bad_request(where + ".content", "`{}.content` must be a string or a list of blocks", where);
  std::string text, thinking;
  Json calls = Json::array();
  for (size_t j = 0; j < content.size(); ++j) {
    const Json& block = content[j];
    const std::string at = fmt::format("{}.content[{}]", where, j);
    const std::string type = type_of(block);
    if (type == "text") {
      if (!text.empty()) text += "\n";
      text += text_block(block, at);
    } else if (type == "tool_result" && role == "user") {
      chat.push_back(tool_result_of(block, at));
    } else if (type == "tool_use" && role == "assistant") {
      calls.push_back(tool_call_of(block, at));
    } else if (type == "thinking" && role == "assistant") {
      // The signature proves a block came from Anthropic's model: nothing here to verify.
      constexpr std::string_view known_thinking[] = {"type", "thinking", "signature"};
      refuse_fields_outside(block, known_thinking, at, at + ".");
      thinking += required_string(block, "thinking", at);
    } else {
      bad_request(
          at, "`{}` is a `{}` block, which a {} message cannot hold here ({})", at,
          type.empty() ? "untyped" : printable(type, 64), role,
          role == "user" ? "text and tool_result blocks" : "text, thinking and tool_use blocks");
    }
  }
  if (role == "user" && text.empty() && !content.empty()) return;  // tool results only
  Json out = {{"role", role}, {"content", text}};
  if (!thinking.empty()) out["reasoning_content"] = thinking;
  if (!calls.empty()) out["tool_calls"] = std::move(calls);
  chat.push_back(std::move(out));
}

Json client_tools(const Json& tools) {
  if (!tools.is_array()) bad_request("tools", "`tools` must be a list of tool definitions");
  Json chat = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& tool = tools[i];
    const std::string where = fmt::format("tools[{}]", i);
    if (!tool.is_object()) bad_request(where, "`{}` must be an object", where);
    const std::string type = type_of(tool);
    if (!type.empty() && type != "custom")
      bad_request(where + ".type",
                  "`{}.type` is `{}`: Anthropic's server tools do not run here; give client "
                  "tools {{name, description, input_schema}}",
                  where, printable(type, 64));
    constexpr std::string_view known[] = {"type", "name", "description", "input_schema",
                                          "cache_control"};
    refuse_fields_outside(tool, known, where, where + ".");
    check_cache_control(tool, where);
    Json function = {{"name", required_string(tool, "name", where)}};
    if (tool.contains("description") && !tool["description"].is_null())
      function["description"] = tool["description"];
    if (!tool.contains("input_schema") || !tool["input_schema"].is_object())
      bad_request(where + ".input_schema", "`{}.input_schema` is required: a JSON schema object",
                  where);
    function["parameters"] = tool["input_schema"];
    chat.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return chat;
}

// Anthropic's tool_choice into the chat body's tool_choice (and parallel_tool_calls).
void read_tool_choice(const Json& choice, Json& chat) {
  const std::string type = type_of(choice);
  constexpr std::string_view known[] = {"type", "name", "disable_parallel_tool_use"};
  refuse_fields_outside(choice, known, "tool_choice", "tool_choice.");
  if (type == "auto") {
    chat["tool_choice"] = "auto";
  } else if (type == "any") {
    chat["tool_choice"] = "required";
  } else if (type == "none") {
    chat["tool_choice"] = "none";
  } else if (type == "tool") {
    chat["tool_choice"] = {
        {"type", "function"},
        {"function", {{"name", required_string(choice, "name", "tool_choice")}}}};
  } else {
    bad_request("tool_choice",
                "`tool_choice` must be {{\"type\": \"auto\" | \"any\" | \"none\"}} or "
                "{{\"type\": \"tool\", \"name\": ...}}");
  }
  if (const Json* off = choice.contains("disable_parallel_tool_use")
                            ? &choice["disable_parallel_tool_use"]
                            : nullptr;
      off && !off->is_null()) {
    if (!off->is_boolean())
      bad_request("tool_choice.disable_parallel_tool_use",
                  "`tool_choice.disable_parallel_tool_use` must be true or false");
    chat["parallel_tool_calls"] = !off->get<bool>();
  }
}

// {type: enabled, budget_tokens}, {type: adaptive} (the model decides: GLM
// thinks) or {type: disabled}. The budget is checked as Anthropic does (at
// least 1024, below max_tokens); max_tokens bounds the reasoning and the
// answer together, as it bounds them there. display "summarized" is what is
// shown anyway; "omitted" is refused.
void read_thinking(const Json& thinking, const Json& body, Json& chat) {
  const std::string type = type_of(thinking);
  constexpr std::string_view known[] = {"type", "budget_tokens", "display"};
  refuse_fields_outside(thinking, known, "thinking", "thinking.");
  if (type == "disabled") {
    chat["thinking"] = {{"type", "disabled"}};
    return;
  }
  if (type != "enabled" && type != "adaptive")
    bad_request("thinking",
                "`thinking` must be {{\"type\": \"enabled\", \"budget_tokens\": N}}, "
                "{{\"type\": \"adaptive\"}} or {{\"type\": \"disabled\"}}");
  if (const auto display = RequestFields(thinking, "thinking.").string("display");
      display && *display != "summarized")
    bad_request("thinking.display",
                "`thinking.display` must be \"summarized\": the thinking text is always shown");
  if (type == "enabled") {
    const Json* budget = thinking.contains("budget_tokens") ? &thinking["budget_tokens"] : nullptr;
    if (!budget || !budget->is_number_integer() || budget->get<int64_t>() < 1024)
      bad_request("thinking.budget_tokens", "`thinking.budget_tokens` must be an integer >= 1024");
    const Json& max_tokens = body.at("max_tokens");
    if (max_tokens.is_number_integer() && budget->get<int64_t>() >= max_tokens.get<int64_t>())
      bad_request("thinking.budget_tokens",
                  "`thinking.budget_tokens` must be less than `max_tokens`");
  }
  chat["thinking"] = {{"type", "enabled"}};
}

// output_config {effort, format}: the effort goes to the chat template as
// reasoning_effort (as the chat endpoint's); a json_schema format is
// constrained decoding, as response_format asks it of the chat endpoint.
void read_output_config(const Json& config, Json& chat) {
  if (!config.is_object()) bad_request("output_config", "`output_config` must be an object");
  constexpr std::string_view known[] = {"effort", "format"};
  refuse_fields_outside(config, known, "output_config", "output_config.");
  if (const auto effort = RequestFields(config, "output_config.").string("effort"))
    chat["reasoning_effort"] = *effort;
  if (!config.contains("format") || config["format"].is_null()) return;
  const Json& format = config["format"];
  constexpr std::string_view format_keys[] = {"type", "schema"};
  refuse_fields_outside(format, format_keys, "output_config.format", "output_config.format.");
  if (type_of(format) != "json_schema" || !format.contains("schema"))
    bad_request(
        "output_config.format",
        "`output_config.format` must be {{\"type\": \"json_schema\", \"schema\": {{...}}}}");
  chat["response_format"] = {{"type", "json_schema"},
                             {"json_schema", {{"name", "output"}, {"schema", format["schema"]}}}};
}

}  // namespace

Json chat_body_of_messages(const Json& body) {
  refuse_fields_outside(body, kMessagesFields, kMessagesPath);
  const RequestFields f(body);
  Json chat = Json::object();
  if (const Json* model = f.get("model"); model && !model->is_string())
    bad_request("model", "`model` must be a string");
  if (!f.has("max_tokens"))
    bad_request("max_tokens", "`max_tokens` is required: the most tokens the answer may have");
  if (const Json* metadata = f.get("metadata")) {
    // Anthropic's user_id, for abuse monitoring: nothing to do here.
    if (!metadata->is_object()) bad_request("metadata", "`metadata` must be an object");
    constexpr std::string_view known[] = {"user_id"};
    refuse_fields_outside(*metadata, known, "metadata", "metadata.");
  }
  if (f.get("service_tier")) (void)f.string("service_tier");  // one tier here
  for (const char* key : {"max_tokens", "stream", "temperature", "top_p", "top_k"})
    if (const Json* value = f.get(key)) chat[key] = *value;
  Json messages = Json::array();
  if (const Json* system = f.get("system"))
    messages.push_back({{"role", "system"}, {"content", text_of_blocks(*system, "system")}});
  const Json* given = f.get("messages");
  if (!given || !given->is_array() || given->empty())
    bad_request("messages", "`messages` is required: a non-empty list of messages");
  for (size_t i = 0; i < given->size(); ++i) append_message((*given)[i], i, messages);
  // Anthropic continues a last assistant message (a prefill); the chat
  // template would start a new turn after it instead.
  if (const Json& last = given->back();
      last.is_object() && last.contains("role") && last["role"] == "assistant")
    bad_request(fmt::format("messages[{}]", given->size() - 1),
                "`messages[{}]` is an assistant message: an answer continuing a prefilled "
                "assistant turn is not supported (end with a user message)",
                given->size() - 1);
  chat["messages"] = std::move(messages);
  if (const Json* stops = f.get("stop_sequences")) {
    if (!stops->is_array())
      bad_request("stop_sequences", "`stop_sequences` must be a list of strings");
    for (const Json& s : *stops)
      if (!s.is_string() || s.get_ref<const std::string&>().empty())
        bad_request("stop_sequences", "`stop_sequences` must hold non-empty strings");
    if (!stops->empty()) chat["stop"] = *stops;
  }
  const Json* tools = f.get("tools");
  if (tools) chat["tools"] = client_tools(*tools);
  if (const Json* choice = f.get("tool_choice")) {
    if (!choice->is_object()) bad_request("tool_choice", "`tool_choice` must be an object");
    read_tool_choice(*choice, chat);
    // Anthropic's "none" with no tools is allowed; the chat path needs none either.
    if (!tools && chat["tool_choice"] != "none" && chat["tool_choice"] != "auto")
      bad_request("tool_choice", "`tool_choice` asks for a tool call but `tools` is empty");
  }
  if (const Json* thinking = f.get("thinking")) read_thinking(*thinking, body, chat);
  if (const Json* config = f.get("output_config")) read_output_config(*config, chat);
  // Anthropic's automatic prompt caching: every prefix is cached here anyway.
  if (const Json* cache = f.get("cache_control"); cache && !cache->is_object())
    bad_request("cache_control", "`cache_control` must be an object");
  return chat;
}

ChatRequest parse_messages_request(const Json& body, const RequestContext& context) {
  return parse_chat_request(chat_body_of_messages(body), context);
}

}  // namespace glmrt::serve
