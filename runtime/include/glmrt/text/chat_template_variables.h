// The variables transformers' apply_chat_template gives a model's Jinja chat
// template, built from an OpenAI-style request body.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>

namespace glmrt::text {

/// bos_token, eos_token, unk_token and pad_token of `model_dir`'s
/// tokenizer_config.json (strings, or AddedToken objects' `content`), as
/// transformers passes its special_tokens_map; empty when there is no file.
/// A malformed file is an error naming it and the key.
nlohmann::ordered_json special_token_variables(const std::filesystem::path& model_dir);

/// `messages`, `tools` (None when absent or empty), `documents` (None),
/// `add_generation_prompt` (default true, as glmrt's built-in renderer),
/// every member of `chat_template_kwargs`, the thinking switches
/// (`enable_thinking`, `thinking`, `reasoning_effort`, `clear_thinking`)
/// also from the request body's top level when not among the kwargs, and
/// `special_tokens` (special_token_variables). Errors name the request's
/// malformed field.
nlohmann::ordered_json chat_template_variables(const nlohmann::ordered_json& request,
                                               const nlohmann::ordered_json& special_tokens);

}  // namespace glmrt::text
