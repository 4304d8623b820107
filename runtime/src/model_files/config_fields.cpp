#include "config_fields.h"

#include <limits>

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>

namespace glmrt::model_files {

using nlohmann::json;

ConfigFields::ConfigFields(std::filesystem::path file) : file_(std::move(file)) {
  const std::string text = read_input_file(file_, input_kinds::model_config);
  require_json_nesting_within(text, file_.string());
  try {
    root_ = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
    fail("{} is not valid JSON: {}", file_, printable(e.what()));
  }
  if (!root_.is_object()) fail("{}: expected a JSON object, found {}", file_, root_.type_name());
}

ConfigFields::ConfigFields(std::filesystem::path file, json root)
    : file_(std::move(file)), root_(std::move(root)) {}

const json* ConfigFields::optional(std::string_view key) const {
  const auto it = root_.find(key);
  if (it == root_.end() || it->is_null()) return nullptr;
  return &*it;
}

const json& ConfigFields::required(std::string_view key) const {
  const json* value = optional(key);
  if (value == nullptr) fail("{}: missing required key '{}'", file_, key);
  return *value;
}

int ConfigFields::as_int(const json& value, std::string_view key) const {
  // Integral JSON numbers only: 2048.0 in a dimension means a broken writer.
  if (value.is_number_integer()) {
    const bool fits = value.is_number_unsigned()
                          ? value.get<uint64_t>() <= uint64_t(std::numeric_limits<int>::max())
                          : value.get<int64_t>() >= std::numeric_limits<int>::min();
    if (fits) return value.get<int>();
  }
  fail("{}: key '{}' must be an integer fitting in 32 bits, found {}", file_, key, value.dump());
}

double ConfigFields::as_number(const json& value, std::string_view key) const {
  if (!value.is_number()) fail("{}: key '{}' must be a number, found {}", file_, key, value.dump());
  return value.get<double>();
}

std::string ConfigFields::as_string(const json& value, std::string_view key) const {
  if (!value.is_string()) fail("{}: key '{}' must be a string, found {}", file_, key, value.dump());
  return value.get<std::string>();
}

int ConfigFields::required_int(std::string_view key) const {
  return as_int(required(key), key);
}

int ConfigFields::optional_int(std::string_view key, int fallback) const {
  const json* value = optional(key);
  return value ? as_int(*value, key) : fallback;
}

double ConfigFields::required_number(std::string_view key) const {
  return as_number(required(key), key);
}

double ConfigFields::optional_number(std::string_view key, double fallback) const {
  const json* value = optional(key);
  return value ? as_number(*value, key) : fallback;
}

bool ConfigFields::optional_bool(std::string_view key, bool fallback) const {
  const json* value = optional(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) {
    fail("{}: key '{}' must be true or false, found {}", file_, key, value->dump());
  }
  return value->get<bool>();
}

std::string ConfigFields::required_string(std::string_view key) const {
  return as_string(required(key), key);
}

}  // namespace glmrt::model_files
