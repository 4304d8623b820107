// Which chat template a command renders with: `--chat-template` on the
// commands that render chat prompts, `chat_template:` in a profile.
#pragma once

#include <optional>
#include <string_view>

namespace glmrt::text {

enum class ChatTemplateChoice {
  model,    // the model's own template (Jinja2 engine), the built-in one when it ships none
  builtin,  // the built-in renderer, whatever template the model directory ships
};

/// "model" or "builtin"; nullopt for anything else.
inline std::optional<ChatTemplateChoice> chat_template_choice_named(std::string_view name) {
  if (name == "model") return ChatTemplateChoice::model;
  if (name == "builtin") return ChatTemplateChoice::builtin;
  return std::nullopt;
}

}  // namespace glmrt::text
