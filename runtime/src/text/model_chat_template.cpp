// Chooses the chat renderer of a model directory: the Jinja2 engine on the
// template it ships, else the built-in GLM-5 renderer its config.json picks.
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/text/chat_template.h>
#include <glmrt/text/chat_template_variables.h>
#include <glmrt/text/jinja_template.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/shipped_chat_template.h>

#include <array>
#include <memory>
#include <optional>

namespace glmrt::text {
namespace {

using TemplateJson = nlohmann::ordered_json;

// The variables whose strings are the request's own text (marked as plain
// text in the prompt: a special-token string typed in a message stays text).
constexpr std::array<std::string_view, 2> kRequestVariables = {"messages", "tools"};

// config.json's model_type, which picks the built-in renderer.
std::string config_model_type(const std::filesystem::path& model_dir) {
  const std::filesystem::path config_path = model_dir / "config.json";
  const std::string shown = printable(config_path.string());
  const std::string text = read_input_file(config_path, input_kinds::model_config);
  require_json_nesting_within(text, shown);
  const nlohmann::json config = nlohmann::json::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) fail("{}: not a JSON object", shown);
  const auto type = config.find("model_type");
  if (type == config.end() || !type->is_string())
    fail("{}: missing string field 'model_type'", shown);
  return type->get<std::string>();
}

bool request_has_tools(const TemplateJson& request) {
  const auto tools = request.find("tools");
  return tools != request.end() && tools->is_array() && !tools->empty();
}

// OpenAI clients send tool-call arguments as JSON strings; templates written
// for transformers (GLM's) iterate them as objects. The variables with each
// such string that holds a JSON object parsed, or nullopt when there is none.
std::optional<TemplateJson> with_parsed_arguments(const TemplateJson& variables) {
  TemplateJson copy = variables;
  bool changed = false;
  for (TemplateJson& message : copy["messages"]) {
    if (!message.is_object() || !message.contains("tool_calls") ||
        !message["tool_calls"].is_array())
      continue;
    for (TemplateJson& call : message["tool_calls"]) {
      TemplateJson* holder =
          call.is_object() && call.contains("function") ? &call["function"] : &call;
      if (!holder->is_object() || !holder->contains("arguments") ||
          !(*holder)["arguments"].is_string())
        continue;
      const std::string& text = (*holder)["arguments"].get_ref<const std::string&>();
      TemplateJson parsed = TemplateJson::parse(text, nullptr, false);
      if (parsed.is_discarded() || !parsed.is_object()) continue;
      (*holder)["arguments"] = std::move(parsed);
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return copy;
}

struct ShippedRenderer {
  std::shared_ptr<const JinjaTemplate> main, tool_use;
  TemplateJson special_tokens;

  RenderedChat operator()(const TemplateJson& request) const {
    const JinjaTemplate& chosen = tool_use && request_has_tools(request) ? *tool_use : *main;
    const TemplateJson variables = chat_template_variables(request, special_tokens);
    try {
      return chosen.render(variables, kRequestVariables);
    } catch (const Error&) {
      // Arguments as transformers' docs want them (objects), when the
      // template failed on the strings a client sent.
      if (const std::optional<TemplateJson> parsed = with_parsed_arguments(variables))
        return chosen.render(*parsed, kRequestVariables);
      throw;
    }
  }
};

}  // namespace

ModelChatTemplate ModelChatTemplate::from_templates(
    const std::vector<ShippedChatTemplate>& templates, nlohmann::ordered_json special_tokens) {
  if (templates.empty()) fail("no chat template to render");
  ShippedRenderer renderer;
  std::string main_text, tool_use_text;
  for (const ShippedChatTemplate& t : templates) {
    auto parsed = std::make_shared<const JinjaTemplate>(t.text, t.source);
    const bool is_tool_use = t.name == "tool_use";
    (is_tool_use ? renderer.tool_use : renderer.main) = std::move(parsed);
    (is_tool_use ? tool_use_text : main_text) = t.text;
  }
  if (!renderer.main) renderer.main = renderer.tool_use;
  renderer.special_tokens = std::move(special_tokens);
  std::string name = renderer.main->name();
  ModelChatTemplate chosen(std::move(renderer), std::move(name));
  chosen.tools_text_ = tool_use_text.empty() ? main_text : tool_use_text;
  return chosen;
}

ModelChatTemplate ModelChatTemplate::for_model(const std::filesystem::path& model_dir,
                                               ChatTemplateChoice choice) {
  if (choice == ChatTemplateChoice::model) {
    const std::vector<ShippedChatTemplate> shipped = find_shipped_chat_templates(model_dir);
    if (!shipped.empty()) return from_templates(shipped, special_token_variables(model_dir));
  }
  return builtin(config_model_type(model_dir), printable((model_dir / "config.json").string()),
                 "the directory ships none (chat_template.jinja or tokenizer_config.json "
                 "`chat_template`)");
}

ModelChatTemplate ModelChatTemplate::builtin(std::string_view model_type, std::string_view source,
                                             std::string_view why_builtin) {
  if (model_type != "glm_moe_dsa")
    fail("{}: model_type '{}' has no built-in chat template (built in: glm_moe_dsa) and {}", source,
         printable(model_type, 128), why_builtin);
  return ModelChatTemplate(&render_glm5_chat_marked, "the built-in GLM-5 template");
}

}  // namespace glmrt::text
