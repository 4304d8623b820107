#include "yaml_fields.h"

#include "closest_key.h"

#include <glmrt/base/error.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace glmrt::yaml_strict {
namespace {

int one_based_line(const YAML::Mark& mark) {
  return mark.line < 0 ? 1 : mark.line + 1;
}

template <typename Number>
bool parse_whole(const std::string& text, Number& out) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;  // "+3" is a number in YAML
  auto [stop, ec] = std::from_chars(begin, end, out);
  return ec == std::errc{} && stop == end && begin != end;
}

}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return fmt::format("`{}`", node.Scalar());
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "nothing";
  }
}

void fail_at(const std::string& file, const YAML::Mark& mark, std::string_view path,
             std::string_view message) {
  if (path.empty()) glmrt::fail("{}:{}: {}", file, one_based_line(mark), message);
  glmrt::fail("{}:{}: key `{}`: {}", file, one_based_line(mark), path, message);
}

Field::Field(std::string file, YAML::Node key, YAML::Node value, std::string path)
    : file_(std::move(file)), key_(key), value_(value), path_(std::move(path)) {}

std::string Field::origin() const {
  const YAML::Mark mark = key_.IsDefined() ? key_.Mark() : value_.Mark();
  return fmt::format("{}:{}", file_, one_based_line(mark));
}

void Field::fail(std::string_view message) const {
  // A null value has no position of its own; point at its key.
  const bool value_has_mark = value_.IsDefined() && !value_.IsNull();
  fail_at(file_, value_has_mark ? value_.Mark() : key_.Mark(), path_, message);
}

const std::string& Field::scalar(std::string_view expected) const {
  if (!value_.IsScalar()) fail(fmt::format("expected {}, found {}", expected, describe(value_)));
  return value_.Scalar();
}

std::string Field::as_string() const {
  return scalar("a text value");
}

bool Field::as_bool() const {
  const std::string& text = scalar("true or false");
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  fail(fmt::format("expected true or false, found `{}`", text));
}

int64_t Field::as_int(int64_t min, int64_t max) const {
  const std::string expected = fmt::format("an integer from {} to {}", min, max);
  const std::string& text = scalar(expected);
  int64_t value = 0;
  if (!parse_whole(text, value)) fail(fmt::format("expected {}, found `{}`", expected, text));
  if (value < min || value > max)
    fail(fmt::format("{} is out of range: expected {}", value, expected));
  return value;
}

uint64_t Field::as_uint64() const {
  constexpr std::string_view expected = "an integer from 0 to 18446744073709551615";
  const std::string& text = scalar(expected);
  uint64_t value = 0;
  if (!parse_whole(text, value)) fail(fmt::format("expected {}, found `{}`", expected, text));
  return value;
}

double Field::as_double(double min, double max) const {
  const std::string expected = fmt::format("a number from {} to {}", min, max);
  const std::string& text = scalar(expected);
  double value = 0;
  if (!parse_whole(text, value) || !std::isfinite(value))
    fail(fmt::format("expected {}, found `{}`", expected, text));
  if (value < min || value > max)
    fail(fmt::format("{} is out of range: expected {}", text, expected));
  return value;
}

double Field::as_finite_number() const {
  constexpr std::string_view expected = "a finite number";
  const std::string& text = scalar(expected);
  double value = 0;
  if (!parse_whole(text, value) || !std::isfinite(value))
    fail(fmt::format("expected {}, found `{}`", expected, text));
  return value;
}

Mapping Field::as_mapping(std::vector<std::string_view> allowed) const {
  if (!value_.IsMap()) fail(fmt::format("expected a mapping, found {}", describe(value_)));
  return Mapping(file_, value_, path_, std::move(allowed));
}

Mapping Field::as_free_mapping() const {
  if (!value_.IsMap()) fail(fmt::format("expected a mapping, found {}", describe(value_)));
  return Mapping(file_, value_, path_, std::nullopt);
}

std::vector<Field> Field::as_sequence() const {
  if (!value_.IsSequence()) fail(fmt::format("expected a sequence, found {}", describe(value_)));
  std::vector<Field> elements;
  for (size_t i = 0; i < value_.size(); ++i)
    elements.emplace_back(file_, YAML::Node(YAML::NodeType::Undefined), value_[i],
                          fmt::format("{}[{}]", path_, i));
  return elements;
}

Mapping::Mapping(std::string file, YAML::Node node, std::string path,
                 std::optional<std::vector<std::string_view>> allowed)
    : file_(std::move(file)), node_(node), path_(std::move(path)) {
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar())
      fail_at(file_, key.Mark(), path_,
              fmt::format("keys must be plain words, found {}", describe(key)));
    const std::string& name = key.Scalar();
    const std::string name_path = child_path(name);
    if (allowed && std::find(allowed->begin(), allowed->end(), name) == allowed->end()) {
      std::string valid;
      for (std::string_view candidate : *allowed)
        valid += fmt::format("{}{}", valid.empty() ? "" : ", ", candidate);
      if (auto suggestion = closest_key(name, *allowed))
        fail_at(
            file_, key.Mark(), name_path,
            fmt::format("unknown key; did you mean `{}`? (valid keys: {})", *suggestion, valid));
      fail_at(file_, key.Mark(), name_path, fmt::format("unknown key (valid keys: {})", valid));
    }
    if (!seen.insert(name).second) fail_at(file_, key.Mark(), name_path, "key appears twice");
    entries_.emplace_back(file_, key, it->second, name_path);
  }
}

std::string Mapping::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

std::optional<Field> Mapping::find(std::string_view key) const {
  for (const Field& field : entries_)
    if (field.path() == child_path(key)) return field;
  return std::nullopt;
}

Field Mapping::require(std::string_view key) const {
  if (auto field = find(key)) return *field;
  fail_at(file_, node_.Mark(), child_path(key), "required key is missing");
}

}  // namespace glmrt::yaml_strict
