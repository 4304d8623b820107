// The chat template of one model directory: the built-in renderer its
// config.json's model_type picks, once the template the directory ships (if
// any) has been checked to be one that renderer reproduces. Every command
// that renders chat prompts (run --chat, chat, serve, template) builds one
// before the model loads, so a model whose own template glmrt cannot render
// is refused at start rather than answered with a silently different prompt.
#pragma once

#include <glmrt/text/chat_template.h>
#include <glmrt/text/chat_template_choice.h>
#include <glmrt/text/tokenizer.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace glmrt::text {

class ModelChatTemplate {
 public:
  /// Reads `model_dir`/config.json (an unknown model_type is an error naming
  /// it) and, for ChatTemplateChoice::model, the templates the directory
  /// ships (shipped_chat_template.h): one the built-in renderer does not
  /// reproduce is an error naming its file and key.
  static ModelChatTemplate for_model(const std::filesystem::path& model_dir,
                                     ChatTemplateChoice choice = ChatTemplateChoice::model);

  /// The prompt for an OpenAI-style request body (chat_template.h).
  std::string render(const nlohmann::ordered_json& request) const {
    return renderer_(request).text;
  }
  /// The prompt with the request's own text marked (chat_template.h).
  RenderedChat render_marked(const nlohmann::ordered_json& request) const {
    return renderer_(request);
  }

 private:
  using Renderer = RenderedChat (*)(const nlohmann::ordered_json&);
  explicit ModelChatTemplate(Renderer renderer) : renderer_(renderer) {}

  Renderer renderer_;
};

}  // namespace glmrt::text
