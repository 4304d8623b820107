// Chat prompts for the supported model families, rendered in C++ (no Jinja
// engine) to exactly what transformers' apply_chat_template gives with the
// model's own template.
//
// The input is an OpenAI-style chat request body:
//   {"messages": [...], "tools": [...], "chat_template_kwargs": {...}}
// Parse it as nlohmann::ordered_json: tool definitions are printed with
// their keys in the order the client sent them, as Python would.
#pragma once

#include <glmrt/text/tokenizer.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace glmrt::text {

// GLM-5 (model_type glm_moe_dsa). chat_template_kwargs (a top-level key of
// the same name is used when the kwarg is absent):
//   add_generation_prompt (default true), enable_thinking (default true),
//   reasoning_effort ("low" / "high", anything else = Max),
//   clear_thinking (default false: past reasoning is kept).
// tool_calls[].function.arguments may be an object or a JSON string holding one.
// Throws glmrt::Error naming the offending field of a malformed request.
std::string render_glm5_chat(const nlohmann::ordered_json& request);

// A rendered prompt and where in it the request's own text lies (message
// content, reasoning, tool definitions and call arguments; sorted, disjoint):
// Tokenizer::encode_with_plain_text reads those ranges as plain text, so a
// "<|user|>" typed in a message cannot open a turn. The template's markup
// (roles, <think>, <tool_call>, ...) is outside them.
struct RenderedChat {
  std::string text;
  std::vector<ByteRange> content;
};
RenderedChat render_glm5_chat_marked(const nlohmann::ordered_json& request);

// The prompt's tokens: the request's own text as plain text (special-token
// strings in it are characters, not control tokens) unless
// `parse_special_in_content`, which tokenizes the prompt as one text.
inline std::vector<TokenId> encode_chat_prompt(const Tokenizer& tokenizer,
                                               const RenderedChat& rendered,
                                               bool parse_special_in_content = false) {
  if (parse_special_in_content) return tokenizer.encode(rendered.text, false);
  return tokenizer.encode_with_plain_text(rendered.text, rendered.content);
}

}  // namespace glmrt::text
