// Chat prompts for the supported model families, rendered in C++ (no Jinja
// engine) to exactly what transformers' apply_chat_template gives with the
// model's own template.
//
// The input is an OpenAI-style chat request body:
//   {"messages": [...], "tools": [...], "chat_template_kwargs": {...}}
// Parse it as nlohmann::ordered_json: tool definitions are printed with
// their keys in the order the client sent them, as Python would.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace glmrt::text {

// GLM-5 (model_type glm_moe_dsa). chat_template_kwargs (a top-level key of
// the same name is used when the kwarg is absent):
//   add_generation_prompt (default true), enable_thinking (default true),
//   reasoning_effort ("low" / "high", anything else = Max),
//   clear_thinking (default false: past reasoning is kept).
// tool_calls[].function.arguments may be an object or a JSON string holding one.
// Throws glmrt::Error naming the offending field of a malformed request.
std::string render_glm5_chat(const nlohmann::ordered_json& request);

}  // namespace glmrt::text
