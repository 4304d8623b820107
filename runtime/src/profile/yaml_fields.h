// Strict reading of YAML documents: every value is checked for its type and
// range, every mapping for unknown and repeated keys, and every error reads
// "FILE:LINE: key `a.b`: what was expected, found what".
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::yaml_strict {

class Mapping;

/// A value in a YAML document together with where it came from.
class Field {
 public:
  Field(std::string file, YAML::Node key, YAML::Node value, std::string path);

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return value_; }
  /// The key as written; empty for an element of a sequence.
  std::string key() const { return key_.IsDefined() ? key_.Scalar() : std::string(); }
  /// "FILE:LINE" of the key (of the value when the field has no key).
  std::string origin() const;
  [[noreturn]] void fail(std::string_view message) const;

  /// Any scalar, as written.
  std::string as_string() const;
  bool as_bool() const;
  int64_t as_int(int64_t min, int64_t max) const;
  uint64_t as_uint64() const;
  /// A finite number in [min, max].
  double as_double(double min, double max) const;
  /// Any finite number (the caller checks its range).
  double as_finite_number() const;
  /// A mapping whose keys must be among `allowed`.
  Mapping as_mapping(std::vector<std::string_view> allowed) const;
  /// A mapping with any scalar keys.
  Mapping as_free_mapping() const;
  /// Elements of a sequence, each named `path[i]`.
  std::vector<Field> as_sequence() const;

 private:
  const std::string& scalar(std::string_view expected) const;

  std::string file_;
  YAML::Node key_;
  YAML::Node value_;
  std::string path_;
};

/// A YAML mapping checked on construction: every key a scalar, none repeated,
/// each among the allowed ones (an unknown key suggests the closest valid one).
class Mapping {
 public:
  Mapping(std::string file, YAML::Node node, std::string path,
          std::optional<std::vector<std::string_view>> allowed);

  std::optional<Field> find(std::string_view key) const;
  /// Like find(), but a missing key is an error naming the mapping's line.
  Field require(std::string_view key) const;
  const std::vector<Field>& entries() const { return entries_; }

 private:
  std::string child_path(std::string_view key) const;

  std::string file_;
  YAML::Node node_;
  std::string path_;
  std::vector<Field> entries_;
};

/// Describes a node for "found ..." in messages: `text`, a sequence, a mapping, nothing.
std::string describe(const YAML::Node& node);

/// "FILE:LINE: key `path`: message" (the key part is left out for an empty path).
[[noreturn]] void fail_at(const std::string& file, const YAML::Mark& mark, std::string_view path,
                          std::string_view message);

}  // namespace glmrt::yaml_strict
