// JsonSchema::problem: a value checked against a compiled schema (enum values
// against their siblings when compiling; answers in tests).
#include <glmrt/base/printable.h>
#include <glmrt/grammar/json_schema.h>

#include <algorithm>
#include <cmath>

namespace glmrt::grammar {
namespace {

int64_t code_point_count(const std::string& utf8) {
  int64_t n = 0;
  for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_whole(const Json& value) {
  if (value.is_number_integer()) return true;
  const double v = value.get<double>();
  return std::isfinite(v) && v == std::floor(v);
}

std::string at(const std::string& path) {
  return path.empty() ? std::string("the value") : "`" + path + "`";
}

}  // namespace

std::optional<std::string> JsonSchema::problem(const Json& value, int index) const {
  struct Checker {
    const JsonSchema& schema;
    std::optional<std::string> check(const Json& v, int index, const std::string& path) const {
      const SchemaNode& node = schema.node(index);
      if (node.literals >= 0) {
        const auto& texts = schema.literals(node.literals).texts;
        if (std::binary_search(texts.begin(), texts.end(), v.dump())) return std::nullopt;
        if (!node.literals_or_types)
          return fmt::format("{} is {}, not one of the allowed values", at(path),
                             printable(v.dump(), 64));
      }
      const uint8_t t = node.types;
      if (v.is_object() && (t & kObjectType)) {
        if (node.object_branches.empty()) return check_object(v, node, path);
        std::optional<std::string> first;
        for (const ObjectBranch& branch : node.object_branches) {
          auto why = check_object(v, schema.node(branch.node), path);
          if (!why) return std::nullopt;
          if (!first) first = std::move(why);
        }
        return fmt::format("{} matches none of the {} object schemas it may be (the first: {})",
                           at(path), node.object_branches.size(), *first);
      }
      if (v.is_array() && (t & kArrayType)) return check_array(v, node, path);
      if (v.is_string() && (t & kStringType)) {
        const int64_t n = code_point_count(v.get_ref<const std::string&>());
        if (n < node.min_length || n > static_cast<int64_t>(node.max_length))
          return fmt::format("{} holds {} characters, outside [{}, {}]", at(path), n,
                             node.min_length, node.max_length);
        if (node.format != StringFormat::none &&
            !string_pattern(node.format).matches(v.get_ref<const std::string&>()))
          return fmt::format("{} is {}, not in the schema's `format`", at(path),
                             printable(v.dump(), 64));
        return std::nullopt;
      }
      if (v.is_number() && ((t & kNumberType) || ((t & kIntegerType) && is_whole(v)))) {
        // Without bounds any number is (the automaton's digit caps are its own).
        const Scaled units = scaled_value(v.get<double>());
        if (node.bounded && (units < node.low || units > node.high))
          return fmt::format("{} is {}, outside the schema's bounds", at(path), v.dump());
        return std::nullopt;
      }
      if (v.is_boolean() && (t & kBooleanType)) return std::nullopt;
      if (v.is_null() && (t & kNullType)) return std::nullopt;
      return fmt::format("{} is {} ({}), a type the schema does not allow", at(path),
                         printable(v.dump(), 64), v.type_name());
    }

    std::optional<std::string> check_object(const Json& v, const SchemaNode& node,
                                            const std::string& path) const {
      uint64_t seen = 0;
      for (auto entry = v.begin(); entry != v.end(); ++entry) {
        const std::string& key = entry.key();
        const Json& item = entry.value();
        const std::string where = path + (path.empty() ? "" : ".") + key;
        const auto it = std::find_if(node.properties.begin(), node.properties.end(),
                                     [&](const Property& p) { return p.name == key; });
        if (it != node.properties.end()) {
          seen |= uint64_t{1} << (it - node.properties.begin());
          if (auto why = check(item, it->node, where)) return why;
        } else if (node.additional < 0) {
          return fmt::format("{} has the key `{}`, which the schema does not allow", at(path),
                             printable(key, 64));
        } else if (auto why = check(item, node.additional, where)) {
          return why;
        }
      }
      for (size_t i = 0; i < node.properties.size(); ++i)
        if ((node.required >> i & 1) && !(seen >> i & 1))
          return fmt::format("{} lacks the required key `{}`", at(path),
                             printable(node.properties[i].name, 64));
      return std::nullopt;
    }

    std::optional<std::string> check_array(const Json& v, const SchemaNode& node,
                                           const std::string& path) const {
      if (v.size() < node.min_items || v.size() > node.max_items)
        return fmt::format("{} holds {} items, outside [{}, {}]", at(path), v.size(),
                           node.min_items, node.max_items);
      for (size_t i = 0; i < v.size(); ++i)
        if (auto why = check(v[i], node.items, fmt::format("{}[{}]", path, i))) return why;
      return std::nullopt;
    }
  };
  return Checker{*this}.check(value, index < 0 ? root_ : index, "");
}

}  // namespace glmrt::grammar
