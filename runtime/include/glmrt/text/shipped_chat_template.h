// The chat template a model directory ships, found where transformers looks
// for it, and whether glmrt's built-in renderer is known to reproduce it.
// glmrt has no Jinja engine: it renders the GLM-5 format in C++, so a
// template it does not know would otherwise be silently replaced.
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

/// SHA-256 (lowercase hex) of `text` as Jinja2 compiles it under
/// transformers: line breaks ("\r\n", "\r") read as "\n" (Python's text mode
/// and Jinja2's lexer both do so) and one final newline optional (Jinja2
/// drops it). Two texts with the same hash are the same template; every
/// other difference, whitespace included, can change the prompt.
std::string canonical_template_sha256(std::string_view text);

/// Whether `text` is a GLM-5 template the built-in renderer is proven to
/// reproduce: its canonical hash is that of a template whose Jinja2 renders
/// tests/fixtures/tokenizer/chat holds and tests/text compares with it.
bool builtin_renders_glm5_template(std::string_view text);

/// The canonical hashes of those templates.
std::vector<std::string_view> builtin_glm5_template_hashes();

}  // namespace glmrt::text
