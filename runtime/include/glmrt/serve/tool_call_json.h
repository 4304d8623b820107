// Reading the JSON a model wrote inside a tool call: untrusted text, so a
// value nested deeper than a request body may be is not parsed.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>

namespace glmrt::serve {

/// `raw` parsed as JSON, or nothing when it is not JSON or nests too deeply.
std::optional<nlohmann::ordered_json> parse_model_json(std::string_view raw);

/// `raw` (whitespace around it allowed) as the compact text of a JSON object,
/// or nothing when it is not one: OpenAI's `function.arguments`.
std::optional<std::string> arguments_object_text(std::string_view raw);

}  // namespace glmrt::serve
