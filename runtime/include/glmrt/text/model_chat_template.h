// The chat template of one model directory. When the directory ships one
// (chat_template.jinja, or tokenizer_config.json `chat_template`), that
// template is rendered by glmrt's Jinja2 engine (jinja_template.h) with the
// variables transformers' apply_chat_template passes; otherwise, or with
// ChatTemplateChoice::builtin, the built-in GLM-5 renderer its config.json's
// model_type picks. Every command that renders chat prompts (run --chat,
// chat, serve, template) builds one before the model loads, so a template
// that does not parse is refused at start.
#pragma once

#include <glmrt/text/chat_template.h>
#include <glmrt/text/chat_template_choice.h>
#include <glmrt/text/shipped_chat_template.h>
#include <glmrt/text/tokenizer.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::text {

class ModelChatTemplate {
 public:
  /// Reads the templates `model_dir` ships (shipped_chat_template.h) and
  /// parses them (a syntax error names the file, line and construct). With
  /// none, or for ChatTemplateChoice::builtin, reads `model_dir`/config.json:
  /// a model_type without a built-in renderer is an error naming it.
  static ModelChatTemplate for_model(const std::filesystem::path& model_dir,
                                     ChatTemplateChoice choice = ChatTemplateChoice::model);

  /// The built-in renderer of `model_type` (glm_moe_dsa: GLM-5's). Another
  /// type is an error naming `source` (where the type was read), the type and
  /// `why_builtin` (why no template of the model's own is used).
  static ModelChatTemplate builtin(std::string_view model_type, std::string_view source,
                                   std::string_view why_builtin);

  /// Parses `templates` (a "default" one and optionally a "tool_use" one, as
  /// find_shipped_chat_templates gives them) with `special_tokens` as the
  /// bos_token/eos_token/... variables (chat_template_variables.h): how a
  /// template from another source (a GGUF file) is rendered exactly as one
  /// from tokenizer_config.json. `templates` must not be empty.
  static ModelChatTemplate from_templates(const std::vector<ShippedChatTemplate>& templates,
                                          nlohmann::ordered_json special_tokens);

  /// The prompt for an OpenAI-style request body (chat_template.h).
  std::string render(const nlohmann::ordered_json& request) const {
    return renderer_(request).text;
  }
  /// The prompt with the request's own text marked (chat_template.h).
  RenderedChat render_marked(const nlohmann::ordered_json& request) const {
    return renderer_(request);
  }
  /// Where the template came from: "built-in GLM-5" or the file (and key).
  const std::string& source() const { return source_; }
  /// The Jinja text that renders requests with tools (the `tool_use`
  /// template when the model ships one): what tells which format the model
  /// writes its tool calls in. Empty for the built-in template.
  const std::string& tools_text() const { return tools_text_; }

 private:
  using Renderer = std::function<RenderedChat(const nlohmann::ordered_json&)>;
  ModelChatTemplate(Renderer renderer, std::string source)
      : renderer_(std::move(renderer)), source_(std::move(source)) {}

  Renderer renderer_;
  std::string source_;
  std::string tools_text_;
};

}  // namespace glmrt::text
