// The chat template a model directory ships, found where transformers looks
// for it (model_chat_template.h renders it with the Jinja2 engine).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::text {

struct ShippedChatTemplate {
  /// Where it came from, for messages: "DIR/chat_template.jinja", or
  /// "DIR/tokenizer_config.json: key `chat_template`" (and the entry's name).
  std::string source;
  std::string text;
  /// "default", or "tool_use" (the one transformers takes for requests with tools).
  std::string name = "default";
};

/// The templates transformers' apply_chat_template would render glmrt's
/// requests with: its "default" one and, when present, the "tool_use" one
/// (taken instead when a request has tools). As transformers reads them,
/// chat_template.jinja (and additional_chat_templates/tool_use.jinja) come
/// before every template of tokenizer_config.json, whose `chat_template` is a
/// string or a list of {name, template} objects. Empty when the directory
/// ships no template. A malformed tokenizer_config.json, or a list with no
/// "default" entry (transformers refuses to choose), is an error naming the
/// file and key.
std::vector<ShippedChatTemplate> find_shipped_chat_templates(
    const std::filesystem::path& model_dir);

}  // namespace glmrt::text
