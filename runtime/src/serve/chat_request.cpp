#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/score/sequence_scorer.h>
#include <glmrt/serve/chat_request.h>
#include <glmrt/text/model_chat_template.h>

namespace glmrt::serve {
namespace {

constexpr std::string_view kRoles[] = {"system", "developer", "user", "assistant", "tool"};

Json checked_messages(const RequestFields& f, const RequestContext& context) {
  const Json* messages = f.get("messages");
  if (!messages) bad_request("messages", "`messages` is required (a list of chat messages)");
  if (!messages->is_array() || messages->empty())
    bad_request("messages", "`messages` must be a non-empty list");
  if (messages->size() > static_cast<size_t>(context.limits.max_messages))
    bad_request("messages", "`messages` holds {} messages; this server allows {} (--max-messages)",
                messages->size(), context.limits.max_messages);
  Json checked = Json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    Json m = (*messages)[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) bad_request(where, "`{}` must be an object", where);
    const Json* role = m.contains("role") ? &m["role"] : nullptr;
    if (!role || !role->is_string() ||
        std::find(std::begin(kRoles), std::end(kRoles), role->get<std::string>()) ==
            std::end(kRoles))
      bad_request(where + ".role",
                  "`{}.role` must be one of system, developer, user, assistant, tool", where);
    // OpenAI's newer name for the system role; the template knows only "system".
    if (*role == "developer") m["role"] = "system";
    if (m.contains("content") && !m["content"].is_null() && !m["content"].is_string() &&
        !m["content"].is_array())
      bad_request(where + ".content", "`{}.content` must be a string or a list of parts", where);
    if (m.contains("content") && m["content"].is_array()) {
      const Json& parts = m["content"];
      for (size_t j = 0; j < parts.size(); ++j) {
        const Json& part = parts[j];
        const Json* type = part.is_object() && part.contains("type") ? &part["type"] : nullptr;
        if (part.is_string() || (type && *type == "text")) continue;
        // The template would put a placeholder the model was never shown an
        // image for: refused rather than silently answered as text.
        bad_request(fmt::format("{}.content[{}]", where, j),
                    "`{}.content[{}]` is a `{}` part: this model reads text parts only", where, j,
                    type && type->is_string() ? printable(type->get<std::string>(), 64)
                                              : std::string("untyped"));
      }
    }
    checked.push_back(std::move(m));
  }
  return checked;
}

// The template variables, from the request's chat_template_kwargs and the
// top-level names the template also reads.
Json template_kwargs(const RequestFields& f) {
  Json kwargs = Json::object();
  if (const Json* given = f.get("chat_template_kwargs")) {
    if (!given->is_object())
      bad_request("chat_template_kwargs", "`chat_template_kwargs` must be an object");
    kwargs = *given;
  }
  // The templates test these as switches and a word: another type would
  // render as something the request did not ask for.
  for (const char* key : {"enable_thinking", "clear_thinking"})
    if (const auto v = f.boolean(key); v && !kwargs.contains(key)) kwargs[key] = *v;
  if (const auto v = f.string("reasoning_effort"); v && !kwargs.contains("reasoning_effort"))
    kwargs["reasoning_effort"] = *v;
  if (const Json* thinking = f.get("thinking"); thinking && !kwargs.contains("enable_thinking")) {
    const Json* type =
        thinking->is_object() && thinking->contains("type") ? &(*thinking)["type"] : nullptr;
    if (!type || (*type != "enabled" && *type != "disabled"))
      bad_request("thinking",
                  "`thinking` must be {{\"type\": \"enabled\"}} or {{\"type\": \"disabled\"}}");
    kwargs["enable_thinking"] = *type == "enabled";
    // DeepSeek-V3.1's templates read the switch as `thinking`.
    if (!kwargs.contains("thinking")) kwargs["thinking"] = *type == "enabled";
  }
  kwargs["add_generation_prompt"] = true;
  return kwargs;
}

struct ToolChoice {
  bool parse_calls = true;
  std::optional<std::string> forced;  // "" = some call (required), else the function's name
};

bool names_tool(const Json* tools, const std::string& name) {
  if (!tools || !tools->is_array()) return false;
  for (const Json& entry : *tools) {
    const Json& tool = entry.is_object() && entry.contains("function") ? entry["function"] : entry;
    if (tool.is_object() && tool.contains("name") && tool["name"] == name) return true;
  }
  return false;
}

// Each tool as OpenAI defines one: {"type": "function", "function": {"name",
// "description", "parameters", "strict"}} (the bare function object is also
// read, as the templates do); a tool without a name could never be called.
void check_tools(const Json& tools) {
  if (!tools.is_array()) bad_request("tools", "`tools` must be a list of tool definitions");
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& entry = tools[i];
    std::string where = fmt::format("tools[{}]", i);
    if (!entry.is_object())
      bad_request(where, "`{}` must be an object {{\"type\": \"function\", \"function\": {{...}}}}",
                  where);
    if (entry.contains("type") && entry["type"] != "function")
      bad_request(where + ".type", "`{}.type` must be \"function\", found {}", where,
                  printable(entry["type"].dump(), 64));
    const Json* function = &entry;
    if (entry.contains("function")) {
      function = &entry["function"];
      where += ".function";
      if (!function->is_object())
        bad_request(where, "`{}` must be an object, found {}", where, function->type_name());
    }
    const Json* name = function->contains("name") ? &(*function)["name"] : nullptr;
    if (!name || !name->is_string() || name->get_ref<const std::string&>().empty())
      bad_request(where + ".name",
                  "`{}.name` is required: a non-empty string (the function's name)", where);
    if (function->contains("description") && !(*function)["description"].is_string() &&
        !(*function)["description"].is_null())
      bad_request(where + ".description", "`{}.description` must be a string", where);
    if (function->contains("parameters") && !(*function)["parameters"].is_object() &&
        !(*function)["parameters"].is_null())
      bad_request(where + ".parameters", "`{}.parameters` must be a JSON schema object", where);
  }
}

ToolChoice parse_tool_choice(const RequestFields& f, const Json* tools) {
  const Json* choice = f.get("tool_choice");
  if (!choice || *choice == "auto") return {};
  if (*choice == "none") return {false, std::nullopt};
  const bool have_tools = tools && tools->is_array() && !tools->empty();
  if (*choice == "required") {
    if (!have_tools) bad_request("tool_choice", "`tool_choice: \"required\"` needs `tools`");
    return {true, std::string()};
  }
  const Json* function =
      choice->is_object() && choice->contains("function") && (*choice)["function"].is_object()
          ? &(*choice)["function"]
          : nullptr;
  if (!function || !function->contains("name") || !(*function)["name"].is_string() ||
      (choice->contains("type") && (*choice)["type"] != "function"))
    bad_request("tool_choice",
                "`tool_choice` must be \"auto\", \"none\", \"required\" or {{\"type\": "
                "\"function\", \"function\": {{\"name\": ...}}}}");
  const std::string name = (*function)["name"].get<std::string>();
  if (!names_tool(tools, name))
    bad_request("tool_choice", "`tool_choice` names `{}`, which is not one of `tools`",
                printable(name, 128));
  return {true, name};
}

}  // namespace

ChatRequest parse_chat_request(const Json& body, const RequestContext& context) {
  const RequestFields f(body);
  ChatRequest r;
  r.generation = read_generation_request(body, Endpoint::chat, context);
  if (f.boolean("logprobs").value_or(false)) {
    r.top_logprobs =
        static_cast<int>(f.integer("top_logprobs", 0, SequenceScorer::kMaxTopLogprobs).value_or(0));
  } else if (f.integer("top_logprobs", 0, SequenceScorer::kMaxTopLogprobs).value_or(0) > 0) {
    bad_request("top_logprobs", "`top_logprobs` needs `logprobs: true`");
  }

  Json render = Json::object();
  render["messages"] = checked_messages(f, context);
  const Json* tools = f.get("tools");
  if (tools) {
    check_tools(*tools);
    render["tools"] = *tools;
  }
  r.parallel_tool_calls = f.boolean("parallel_tool_calls").value_or(true);
  render["chat_template_kwargs"] = template_kwargs(f);
  const ToolChoice tool_choice = parse_tool_choice(f, tools);
  if (tools && !tools->empty() && tool_choice.parse_calls) r.tools = *tools;

  text::RenderedChat rendered;
  try {
    rendered = context.chat_template.render_marked(render);
  } catch (const Error& e) {
    bad_request("messages", "{}", e.what());
  }
  r.thinking = rendered.text.ends_with("<think>");
  auto ids =
      text::encode_chat_prompt(context.tokenizer, rendered, context.allow_special_in_content);
  if (tool_choice.forced && r.generation.json_format)
    bad_request("response_format",
                "a JSON `response_format` and `tool_choice` {} together: the answer cannot be both "
                "JSON content and a call",
                tool_choice.forced->empty() ? "\"required\"" : "naming a function");
  if (tool_choice.forced) {
    // The answer starts as a call (to the named function): the prompt ends
    // with its opening, which the answer's parser reads as if generated.
    r.forced_answer =
        (r.thinking ? "</think>" : "") + context.tool_calls->forced_opening(*tool_choice.forced);
    r.forced_call = true;
    r.forced_function = *tool_choice.forced;
  } else if (r.generation.json_format && r.thinking) {
    // JSON is the content: the reasoning is closed before the answer starts
    // (a small model could otherwise reason until max_tokens).
    r.forced_answer = "</think>";
  }
  for (text::TokenId id : context.tokenizer.encode(r.forced_answer, false)) ids.push_back(id);
  r.prompt.assign(ids.begin(), ids.end());
  if (static_cast<int64_t>(r.prompt.size()) > context.max_context)
    throw ApiError(400, "invalid_request_error",
                   fmt::format("the conversation is {} tokens; this model's context holds {}",
                               r.prompt.size(), context.max_context),
                   "messages", "context_length_exceeded");
  return r;
}

}  // namespace glmrt::serve
