#include <glmrt/base/number_text.h>
#include <glmrt/base/printable.h>
#include <glmrt/serve/request_fields.h>

#include <cmath>

namespace glmrt::serve {

Json parse_request_body(std::string_view body) {
  Json parsed;
  try {
    parsed = Json::parse(body, [](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxJsonDepth)
        bad_request("", "the request body nests JSON deeper than {} levels", kMaxJsonDepth);
      return true;
    });
  } catch (const Json::exception& e) {
    bad_request("", "the request body is not valid JSON: {}", printable(e.what(), 512));
  }
  if (!parsed.is_object())
    bad_request("", "the request body must be a JSON object, found {}", parsed.type_name());
  return parsed;
}

RequestFields::RequestFields(const Json& object, std::string prefix)
    : object_(object), prefix_(std::move(prefix)) {}

const Json* RequestFields::get(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool RequestFields::has(std::string_view key) const {
  return get(key) != nullptr;
}

std::optional<double> RequestFields::number(std::string_view key, double min, double max) const {
  const Json* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_number())
    bad_request(name(key), "`{}` must be a number in [{}, {}], found {}", name(key),
                number_text(min), number_text(max), v->type_name());
  const double value = v->get<double>();
  if (!(value >= min && value <= max))  // NaN fails too
    bad_request(name(key), "`{}` must be in [{}, {}], found {}", name(key), number_text(min),
                number_text(max), printable(v->dump(), 64));
  return value;
}

std::optional<int64_t> RequestFields::integer(std::string_view key, int64_t min,
                                              int64_t max) const {
  const Json* v = get(key);
  if (!v) return std::nullopt;
  // 3.0 is an integer to a JavaScript client.
  const bool whole = v->is_number_integer() ||
                     (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() &&
                      std::abs(v->get<double>()) < 9e15);
  if (!whole)
    bad_request(name(key), "`{}` must be an integer in [{}, {}], found {}", name(key), min, max,
                v->is_number() ? printable(v->dump(), 64) : std::string(v->type_name()));
  // Unsigned values above int64's range compare as huge, never as negative.
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(max))
    bad_request(name(key), "`{}` must be in [{}, {}], found {}", name(key), min, max,
                printable(v->dump(), 64));
  const int64_t value =
      v->is_number_float() ? static_cast<int64_t>(v->get<double>()) : v->get<int64_t>();
  if (value < min || value > max)
    bad_request(name(key), "`{}` must be in [{}, {}], found {}", name(key), min, max, value);
  return value;
}

std::optional<bool> RequestFields::boolean(std::string_view key) const {
  const Json* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean())
    bad_request(name(key), "`{}` must be true or false, found {}", name(key),
                printable(v->dump(), 64));
  return v->get<bool>();
}

std::optional<std::string> RequestFields::string(std::string_view key) const {
  const Json* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_string())
    bad_request(name(key), "`{}` must be a string, found {}", name(key), v->type_name());
  return v->get<std::string>();
}

}  // namespace glmrt::serve
