#include <fmt/ranges.h>
#include <glmrt/base/printable.h>
#include <glmrt/serve/response_format.h>

#include <algorithm>
#include <string_view>

namespace glmrt::serve {
namespace {

constexpr size_t kMaxSchemaNameLength = 64;  // OpenAI's limit

bool is_schema_name(const std::string& name) {
  return !name.empty() && name.size() <= kMaxSchemaNameLength &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
         });
}

void refuse_other_keys(const Json& object, std::initializer_list<std::string_view> known,
                       std::string_view where) {
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      bad_request("response_format", "`{}.{}` is not a field of {} (it has {})", where,
                  printable(key, 64), where, fmt::join(known, ", "));
}

std::shared_ptr<const grammar::JsonSchema> read_json_schema(const Json& format) {
  if (!format.contains("json_schema") || !format["json_schema"].is_object())
    bad_request("response_format",
                "`response_format.json_schema` is required with type json_schema: {{\"name\": "
                "..., \"schema\": {{...}}, \"strict\": true}}");
  const Json& spec = format["json_schema"];
  refuse_other_keys(spec, {"name", "schema", "strict", "description"},
                    "response_format.json_schema");
  if (!spec.contains("name") || !spec["name"].is_string() ||
      !is_schema_name(spec["name"].get<std::string>()))
    bad_request("response_format",
                "`response_format.json_schema.name` must be a name of 1 to {} letters, digits, "
                "`_` or `-`",
                kMaxSchemaNameLength);
  if (spec.contains("strict") && !spec["strict"].is_boolean() && !spec["strict"].is_null())
    bad_request("response_format", "`response_format.json_schema.strict` must be a boolean");
  if (spec.contains("description") && !spec["description"].is_string())
    bad_request("response_format", "`response_format.json_schema.description` must be a string");
  // Without a schema OpenAI answers any JSON object; strict or not, the
  // answer is held to the schema (strict: false asks for no less).
  if (!spec.contains("schema") || spec["schema"].is_null())
    return std::make_shared<const grammar::JsonSchema>(grammar::JsonSchema::any_object());
  try {
    return std::make_shared<const grammar::JsonSchema>(
        grammar::JsonSchema::compile(spec["schema"]));
  } catch (const grammar::SchemaError& e) {
    bad_request("response_format", "response_format.json_schema.schema: {}", e.what());
  }
}

}  // namespace

std::shared_ptr<const grammar::JsonSchema> read_response_format(const RequestFields& f) {
  const Json* format = f.get("response_format");
  if (!format) return nullptr;
  const Json* type = format->is_object() && format->contains("type") ? &(*format)["type"] : nullptr;
  if (!type || !type->is_string())
    bad_request("response_format",
                "`response_format` must be {{\"type\": \"text\"}}, {{\"type\": \"json_object\"}} "
                "or {{\"type\": \"json_schema\", \"json_schema\": {{...}}}}");
  if (*type == "text") return nullptr;
  if (*type == "json_object") {
    refuse_other_keys(*format, {"type"}, "response_format");
    return std::make_shared<const grammar::JsonSchema>(grammar::JsonSchema::any_object());
  }
  if (*type == "json_schema") {
    refuse_other_keys(*format, {"type", "json_schema"}, "response_format");
    return read_json_schema(*format);
  }
  bad_request("response_format",
              "`response_format.type` is {}: expected text, json_object or json_schema",
              printable(type->dump(), 64));
}

}  // namespace glmrt::serve
