// Typed access to the keys of a parsed config.json, with errors that name the
// file and the key and say what type or range was expected.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace glmrt::model_files {

class ConfigFields {
 public:
  /// Reads and parses `file`, which must hold a JSON object.
  explicit ConfigFields(std::filesystem::path file);
  /// Fields made elsewhere (a GGUF's metadata); `file` names them in errors.
  ConfigFields(std::filesystem::path file, nlohmann::json root);

  const std::filesystem::path& file() const { return file_; }

  /// The value of `key`, or nullptr when the key is absent or null.
  const nlohmann::json* optional(std::string_view key) const;
  /// The value of `key`; throws when absent or null.
  const nlohmann::json& required(std::string_view key) const;

  int required_int(std::string_view key) const;
  int optional_int(std::string_view key, int fallback) const;
  double required_number(std::string_view key) const;
  double optional_number(std::string_view key, double fallback) const;
  bool optional_bool(std::string_view key, bool fallback) const;
  std::string required_string(std::string_view key) const;

  /// Converts `value` (found at `key`, a dotted path for nested keys) or throws.
  int as_int(const nlohmann::json& value, std::string_view key) const;
  double as_number(const nlohmann::json& value, std::string_view key) const;
  std::string as_string(const nlohmann::json& value, std::string_view key) const;

 private:
  std::filesystem::path file_;
  nlohmann::json root_;
};

}  // namespace glmrt::model_files
