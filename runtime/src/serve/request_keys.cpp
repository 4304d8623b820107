#include <glmrt/base/printable.h>
#include <glmrt/serve/request_keys.h>

#include <algorithm>
#include <string_view>

namespace glmrt::serve {
namespace {

enum class FieldUse : uint8_t { chat = 1, completions = 2, both = 3 };

bool endpoint_uses(FieldUse use, Endpoint endpoint) {
  const auto bit =
      static_cast<uint8_t>(endpoint == Endpoint::chat ? FieldUse::chat : FieldUse::completions);
  return (static_cast<uint8_t>(use) & bit) != 0;
}

// Read (and their values checked) by the request parsers.
struct ImplementedField {
  std::string_view name;
  FieldUse use;
};
constexpr ImplementedField kImplemented[] = {
    {"temperature", FieldUse::both},
    {"top_p", FieldUse::both},
    {"top_k", FieldUse::both},
    {"min_p", FieldUse::both},
    {"presence_penalty", FieldUse::both},
    {"frequency_penalty", FieldUse::both},
    {"repetition_penalty", FieldUse::both},
    {"seed", FieldUse::both},
    {"max_tokens", FieldUse::both},
    {"max_completion_tokens", FieldUse::both},
    {"stop", FieldUse::both},
    {"stream", FieldUse::both},
    {"stream_options", FieldUse::both},
    {"ignore_eos", FieldUse::both},
    {"skip_special_tokens", FieldUse::both},
    {"n", FieldUse::both},
    {"best_of", FieldUse::both},  // 1 only
    {"logit_bias", FieldUse::both},
    {"response_format", FieldUse::both},
    {"logprobs", FieldUse::both},
    {"messages", FieldUse::chat},
    {"top_logprobs", FieldUse::chat},
    {"tools", FieldUse::chat},
    {"tool_choice", FieldUse::chat},
    {"parallel_tool_calls", FieldUse::chat},
    {"chat_template_kwargs", FieldUse::chat},
    {"enable_thinking", FieldUse::chat},
    {"reasoning_effort", FieldUse::chat},
    {"clear_thinking", FieldUse::chat},
    {"thinking", FieldUse::chat},
    {"prompt", FieldUse::completions},
    {"echo", FieldUse::completions},
    {"suffix", FieldUse::completions},  // empty only
};

// Accepted with no effect: what they ask of the server is already so, or
// concerns a service this server is not. Their type is still checked.
enum class FieldType { string, object, boolean };
struct NoOpField {
  std::string_view name;
  FieldType type;
};
constexpr NoOpField kNoOps[] = {
    {"model", FieldType::string},  // the one model served answers any name
    {"user", FieldType::string},   // an end user's id, for a provider's abuse monitoring
    {"safety_identifier", FieldType::string},  // the same, OpenAI's newer name
    {"metadata", FieldType::object},           // tags for stored completions; nothing is stored
    {"store", FieldType::boolean},             // false only: nothing is stored
    {"service_tier", FieldType::string},       // a provider's billing tier; there is one here
    {"prompt_cache_key", FieldType::string},   // prefixes are cached whatever the key
};

// Fields of OpenAI's API this server cannot honour, and why.
struct UnsupportedField {
  std::string_view name, reason;
};
constexpr UnsupportedField kUnsupported[] = {
    {"functions", "OpenAI's deprecated function calling: give `tools` instead"},
    {"function_call", "OpenAI's deprecated function calling: give `tool_choice` instead"},
    {"audio", "this model reads and writes text only"},
    {"modalities", "this model writes text only (leave it out)"},
    {"prediction", "predicted outputs are not supported"},
    {"web_search_options", "this server has no web search"},
};

const char* field_type_name(FieldType type) {
  switch (type) {
    case FieldType::string:
      return "a string";
    case FieldType::object:
      return "an object";
    case FieldType::boolean:
      return "true or false";
  }
  return "";
}

bool has_field_type(const Json& value, FieldType type) {
  switch (type) {
    case FieldType::string:
      return value.is_string();
    case FieldType::object:
      return value.is_object();
    case FieldType::boolean:
      return value.is_boolean();
  }
  return false;
}

const char* endpoint_path(Endpoint endpoint) {
  return endpoint == Endpoint::chat ? "/v1/chat/completions" : "/v1/completions";
}

}  // namespace

void refuse_unknown_fields(const RequestFields& body, Endpoint endpoint) {
  const Json& object = body.object();
  for (const auto& item : object.items()) {
    // Named, not structured bindings: clang 14 (the fuzz build) cannot capture those in lambdas.
    const std::string& key = item.key();
    const Json& value = item.value();
    if (value.is_null()) continue;  // null is absent: the default
    const auto implemented = std::find_if(std::begin(kImplemented), std::end(kImplemented),
                                          [&](const ImplementedField& f) { return f.name == key; });
    if (implemented != std::end(kImplemented)) {
      if (endpoint_uses(implemented->use, endpoint)) continue;
      bad_request(
          key, "`{}` is a field of {}, not of {}", key,
          endpoint_path(endpoint == Endpoint::chat ? Endpoint::completions : Endpoint::chat),
          endpoint_path(endpoint));
    }
    const auto no_op = std::find_if(std::begin(kNoOps), std::end(kNoOps),
                                    [&](const NoOpField& f) { return f.name == key; });
    if (no_op != std::end(kNoOps)) {
      if (!has_field_type(value, no_op->type))
        bad_request(key, "`{}` must be {}, found {}", key, field_type_name(no_op->type),
                    value.type_name());
      if (key == "store" && value.get<bool>())
        bad_request(key, "`store: true` is not supported: this server stores no completions");
      continue;
    }
    const auto unsupported = std::find_if(std::begin(kUnsupported), std::end(kUnsupported),
                                          [&](const UnsupportedField& f) { return f.name == key; });
    if (unsupported != std::end(kUnsupported)) {
      if (key == "modalities" && value == Json::array({"text"})) continue;
      bad_request(key, "`{}` is not supported: {}", key, unsupported->reason);
    }
    bad_request(printable(key, 64), "`{}` is not a field of {} (it would be ignored): leave it out",
                printable(key, 64), endpoint_path(endpoint));
  }
}

void refuse_fields_outside(const Json& object, std::span<const std::string_view> known,
                           std::string_view where, std::string_view prefix) {
  if (!object.is_object()) return;
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (item.value().is_null()) continue;  // null is absent: the default
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string name = fmt::format("{}{}", prefix, printable(key, 64));
    bad_request(name, "`{}` is not a field of {} (it would be ignored): leave it out", name, where);
  }
}

}  // namespace glmrt::serve
