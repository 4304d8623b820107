#include <glmrt/serve/request_fields.h>
#include <glmrt/serve/tool_call_json.h>

namespace glmrt::serve {

std::optional<nlohmann::ordered_json> parse_model_json(std::string_view raw) {
  bool too_deep = false;
  nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(
      raw,
      [&](int depth, nlohmann::ordered_json::parse_event_t, nlohmann::ordered_json&) {
        too_deep = too_deep || depth > kMaxJsonDepth;
        return true;
      },
      false);
  if (parsed.is_discarded() || too_deep) return std::nullopt;
  return parsed;
}

std::optional<std::string> arguments_object_text(std::string_view raw) {
  const auto parsed = parse_model_json(raw);
  if (!parsed || !parsed->is_object()) return std::nullopt;
  return parsed->dump();
}

}  // namespace glmrt::serve
