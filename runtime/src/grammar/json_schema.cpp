#include <glmrt/base/printable.h>
#include <glmrt/grammar/json_schema.h>

#include "schema_compiler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

namespace glmrt::grammar {
namespace {

constexpr int kMaxSchemaDepth = 32;
constexpr size_t kMaxSchemaNodes = 4096;
constexpr size_t kMaxProperties = 64;  // an object's seen set is one 64-bit word

constexpr std::string_view kKnownKeywords[] = {"type",
                                               "enum",
                                               "const",
                                               "properties",
                                               "required",
                                               "additionalProperties",
                                               "items",
                                               "minItems",
                                               "maxItems",
                                               "minLength",
                                               "maxLength",
                                               "minimum",
                                               "maximum",
                                               "exclusiveMinimum",
                                               "exclusiveMaximum",
                                               "format",
                                               "anyOf",
                                               "oneOf",
                                               "$ref",
                                               "title",
                                               "description",
                                               "default",
                                               "examples",
                                               "$comment",
                                               "$schema",
                                               "$defs",
                                               "definitions",
                                               "discriminator"};

Scaled power_of_ten(int n) {
  Scaled p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// The widest numbers the automaton writes: kIntegerDigits nines, every
// fraction digit nine too.
const Scaled kScaledLimit = power_of_ten(kIntegerDigits + kFractionDigits) - 1;
const Scaled kUnit = power_of_ten(kFractionDigits);

uint8_t type_bit(const Json& name, const std::string& path) {
  static const std::map<std::string, uint8_t, std::less<>> bits = {
      {"object", kObjectType}, {"array", kArrayType},     {"string", kStringType},
      {"number", kNumberType}, {"integer", kIntegerType}, {"boolean", kBooleanType},
      {"null", kNullType}};
  if (name.is_string())
    if (const auto it = bits.find(name.get<std::string>()); it != bits.end()) return it->second;
  refuse_schema(path, "type",
                fmt::format("`type` at {} is {}: expected object, array, string, number, integer, "
                            "boolean or null",
                            schema_where(path), printable(name.dump(), 64)));
}

uint32_t count_keyword(const Json& schema, const char* key, const std::string& path) {
  const Json& v = schema[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
    refuse_schema(path, key,
                  fmt::format("`{}` at {} must be a whole number from 0 to {}, found {}", key,
                              schema_where(path), INT32_MAX, printable(v.dump(), 64)));
  return static_cast<uint32_t>(v.get<int64_t>());
}

double number_keyword(const Json& schema, const char* key, const std::string& path) {
  const Json& v = schema[key];
  if (!v.is_number())
    refuse_schema(path, key,
                  fmt::format("`{}` at {} must be a number, found {}", key, schema_where(path),
                              printable(v.dump(), 64)));
  return v.get<double>();
}

Scaled clamp_scaled(long double units) {
  const long double limit = static_cast<long double>(kScaledLimit) + 1;
  return static_cast<Scaled>(std::clamp(units, -limit, limit));
}

}  // namespace

Scaled scaled_value(double value) {
  const long double units = static_cast<long double>(value) * static_cast<long double>(kUnit);
  return clamp_scaled(std::nearbyint(units));
}

namespace {

// The least (or greatest) unit a bound admits; `step` is 1 unit for numbers,
// kUnit for integers.
Scaled lower_bound_units(double bound, bool exclusive, Scaled step) {
  const long double units = static_cast<long double>(bound) * static_cast<long double>(kUnit);
  const long double nearest = std::nearbyint(units);
  Scaled low =
      std::fabs(units - nearest) < 1e-6L ? clamp_scaled(nearest) : clamp_scaled(std::ceil(units));
  if (exclusive && std::fabs(units - nearest) < 1e-6L) low += 1;
  // Round up to a multiple of step.
  Scaled rem = low % step;
  if (rem < 0) rem += step;
  if (rem != 0) low += step - rem;
  return low;
}

Scaled upper_bound_units(double bound, bool exclusive, Scaled step) {
  return -lower_bound_units(-bound, exclusive, step);
}

}  // namespace

JsonSchema::Compiler::Compiler(JsonSchema& out, const Json& document)
    : out_(out), document_(document) {}

int JsonSchema::Compiler::compile(const Json& schema, const std::string& path, int depth) {
  if (depth > kMaxSchemaDepth)
    refuse_schema(path, "",
                  fmt::format("the schema nests deeper than {} levels at {}", kMaxSchemaDepth,
                              schema_where(path)));
  if (out_.nodes_.size() >= kMaxSchemaNodes)
    refuse_schema(path, "", fmt::format("the schema has more than {} subschemas", kMaxSchemaNodes));
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return 0;
    refuse_schema(
        path, "",
        fmt::format("the schema at {} is `false`: no value satisfies it", schema_where(path)));
  }
  if (!schema.is_object())
    refuse_schema(path, "",
                  fmt::format("the schema at {} must be an object, found {}", schema_where(path),
                              schema.type_name()));
  for (const auto& [key, value] : schema.items())
    if (std::find(std::begin(kKnownKeywords), std::end(kKnownKeywords), key) ==
        std::end(kKnownKeywords))
      refuse_schema(
          path, key,
          fmt::format(
              "`{}` at {} is not supported: constrained decoding knows type, enum, "
              "const, properties, required, additionalProperties, items, minItems, "
              "maxItems, minLength, maxLength, minimum, maximum, exclusiveMinimum, "
              "exclusiveMaximum (and the annotations title, description, default, "
              "examples, $comment, $schema), format, anyOf, oneOf (with discriminator), $ref and "
              "$defs",
              printable(key, 64), schema_where(path)));
  for (const char* key : {"$defs", "definitions"})
    if (schema.contains(key) && !schema[key].is_object())
      refuse_schema(
          path, key,
          fmt::format("`{}` at {} must be an object of named schemas", key, schema_where(path)));
  // OpenAPI's `discriminator` only names the key that tells a union's
  // branches apart (their enum/const values of it do that here).
  if (schema.contains("discriminator") && !schema.contains("anyOf") && !schema.contains("oneOf"))
    refuse_schema(
        path, "discriminator",
        fmt::format("`discriminator` at {} belongs beside `oneOf` or `anyOf`", schema_where(path)));
  if (schema.contains("$ref")) return compile_ref(schema, path, depth);
  if (schema.contains("anyOf") || schema.contains("oneOf"))
    return compile_union(schema, path, depth);
  SchemaNode node;
  node.types = kAnyType;
  if (schema.contains("type")) {
    const Json& type = schema["type"];
    node.types = 0;
    if (type.is_array()) {
      if (type.empty())
        refuse_schema(path, "type",
                      fmt::format("`type` at {} is an empty list", schema_where(path)));
      for (const Json& name : type) node.types |= type_bit(name, path);
    } else {
      node.types = type_bit(type, path);
    }
    if (node.types & kNumberType) node.types &= static_cast<uint8_t>(~kIntegerType);
  }
  read_string_keywords(schema, path, node);
  read_number_keywords(schema, path, node);
  const int index = static_cast<int>(out_.nodes_.size());
  out_.nodes_.push_back(node);
  // Children are compiled after the node has its place (nodes_ may grow).
  read_array_keywords(schema, path, depth, index);
  read_object_keywords(schema, path, depth, index);
  read_literals(schema, path, index);
  return index;
}

void JsonSchema::Compiler::needs_type(const Json& schema, const char* key, uint8_t types,
                                      uint8_t wanted, const char* what, const std::string& path) {
  if (schema.contains(key) && !(types & wanted))
    refuse_schema(path, key,
                  fmt::format("`{}` at {} applies to {}, which its `type` does not allow", key,
                              schema_where(path), what));
}

void JsonSchema::Compiler::read_string_keywords(const Json& schema, const std::string& path,
                                                SchemaNode& node) {
  needs_type(schema, "minLength", node.types, kStringType, "strings", path);
  needs_type(schema, "maxLength", node.types, kStringType, "strings", path);
  if (schema.contains("minLength")) node.min_length = count_keyword(schema, "minLength", path);
  if (schema.contains("maxLength")) node.max_length = count_keyword(schema, "maxLength", path);
  needs_type(schema, "format", node.types, kStringType, "strings", path);
  if (schema.contains("format")) {
    const Json& name = schema["format"];
    const auto format =
        name.is_string() ? string_format_named(name.get<std::string>()) : std::nullopt;
    if (!format)
      refuse_schema(
          path, "format",
          fmt::format("`format` {} at {} is not supported: constrained decoding writes {}",
                      printable(name.dump(), 64), schema_where(path), kStringFormatNames));
    if (schema.contains("minLength") || schema.contains("maxLength"))
      refuse_schema(path, "format",
                    fmt::format("`format` with `minLength` or `maxLength` at {} is not supported",
                                schema_where(path)));
    node.format = *format;
  }
  if (node.min_length > node.max_length)
    refuse_schema(path, "minLength",
                  fmt::format("`minLength` {} at {} is more than `maxLength` {}", node.min_length,
                              schema_where(path), node.max_length));
}

void JsonSchema::Compiler::read_number_keywords(const Json& schema, const std::string& path,
                                                SchemaNode& node) {
  const uint8_t numeric = kNumberType | kIntegerType;
  const Scaled step = (node.types & kNumberType) ? 1 : kUnit;
  node.low = -(kScaledLimit / step) * step;
  node.high = (kScaledLimit / step) * step;
  for (const char* key : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
    needs_type(schema, key, node.types, numeric, "numbers", path);
    if (!schema.contains(key)) continue;
    const double bound = number_keyword(schema, key, path);
    const bool exclusive = key[0] == 'e';
    node.bounded = true;
    if (std::string_view(key).ends_with("inimum"))
      node.low = std::max(node.low, lower_bound_units(bound, exclusive, step));
    else
      node.high = std::min(node.high, upper_bound_units(bound, exclusive, step));
  }
  if (node.bounded && node.low > node.high && (node.types & numeric))
    refuse_schema(
        path, "minimum",
        fmt::format("no {} at {} lies within its `minimum`/`maximum` (numbers are written "
                    "with at most {} digits before the point and {} after it)",
                    (node.types & kNumberType) ? "number" : "integer", schema_where(path),
                    kIntegerDigits, kFractionDigits));
}

void JsonSchema::Compiler::read_array_keywords(const Json& schema, const std::string& path,
                                               int depth, int index) {
  const uint8_t types = out_.nodes_[index].types;
  for (const char* key : {"items", "minItems", "maxItems"})
    needs_type(schema, key, types, kArrayType, "arrays", path);
  int items = 0;
  if (schema.contains("items")) {
    if (schema["items"].is_array())
      refuse_schema(path, "items",
                    fmt::format("`items` at {} is a list (a tuple): only one schema for every item "
                                "is supported",
                                schema_where(path)));
    items = compile(schema["items"], path + (path.empty() ? "" : ".") + "items", depth + 1);
  }
  SchemaNode& node = out_.nodes_[index];
  node.items = items;
  if (schema.contains("minItems")) node.min_items = count_keyword(schema, "minItems", path);
  if (schema.contains("maxItems")) node.max_items = count_keyword(schema, "maxItems", path);
  if (node.min_items > node.max_items)
    refuse_schema(path, "minItems",
                  fmt::format("`minItems` {} at {} is more than `maxItems` {}", node.min_items,
                              schema_where(path), node.max_items));
}

void JsonSchema::Compiler::read_object_keywords(const Json& schema, const std::string& path,
                                                int depth, int index) {
  const uint8_t types = out_.nodes_[index].types;
  for (const char* key : {"properties", "required", "additionalProperties"})
    needs_type(schema, key, types, kObjectType, "objects", path);
  const std::string prefix = path + (path.empty() ? "" : ".");
  std::vector<Property> properties;
  if (schema.contains("properties")) {
    const Json& given = schema["properties"];
    if (!given.is_object())
      refuse_schema(path, "properties",
                    fmt::format("`properties` at {} must be an object", schema_where(path)));
    if (given.size() > kMaxProperties)
      refuse_schema(path, "properties",
                    fmt::format("`properties` at {} holds {} properties; at most {} are supported",
                                schema_where(path), given.size(), kMaxProperties));
    for (const auto& [name, sub] : given.items())
      properties.push_back({name, compile(sub, prefix + "properties." + name, depth + 1)});
  }
  uint64_t required = 0;
  if (schema.contains("required")) {
    const Json& given = schema["required"];
    if (!given.is_array())
      refuse_schema(
          path, "required",
          fmt::format("`required` at {} must be a list of property names", schema_where(path)));
    for (const Json& name : given) {
      const auto it = std::find_if(properties.begin(), properties.end(),
                                   [&](const Property& p) { return name == p.name; });
      if (it == properties.end())
        refuse_schema(path, "required",
                      fmt::format("`required` at {} names {}, which `properties` does not define",
                                  schema_where(path), printable(name.dump(), 64)));
      required |= uint64_t{1} << (it - properties.begin());
    }
  }
  int additional = properties.empty() ? 0 : -1;
  if (schema.contains("additionalProperties")) {
    const Json& given = schema["additionalProperties"];
    if (given.is_boolean())
      additional = given.get<bool>() ? 0 : -1;
    else
      additional = compile(given, prefix + "additionalProperties", depth + 1);
  }
  LiteralSet keys;
  for (size_t i = 0; i < properties.size(); ++i) {
    keys.texts.push_back(Json(properties[i].name).dump());
    keys.tags.push_back(static_cast<int>(i));
  }
  SchemaNode& node = out_.nodes_[index];
  node.properties = std::move(properties);
  node.required = required;
  node.additional = additional;
  if (!keys.texts.empty()) node.keys = out_.add_literals(std::move(keys));
}

void JsonSchema::Compiler::read_literals(const Json& schema, const std::string& path, int index) {
  if (schema.contains("enum") && schema.contains("const"))
    refuse_schema(path, "const",
                  fmt::format("`enum` and `const` at {} together: give one", schema_where(path)));
  std::vector<Json> values;
  const char* key = schema.contains("enum") ? "enum" : "const";
  if (schema.contains("enum")) {
    const Json& given = schema["enum"];
    if (!given.is_array() || given.empty())
      refuse_schema(path, "enum",
                    fmt::format("`enum` at {} must be a non-empty list", schema_where(path)));
    values.assign(given.begin(), given.end());
  } else if (schema.contains("const")) {
    values.push_back(schema["const"]);
  } else {
    return;
  }
  LiteralSet set;
  for (size_t i = 0; i < values.size(); ++i) {
    if (const auto why = out_.problem(values[i], index))
      refuse_schema(path, key,
                    fmt::format("`{}` at {}: {} does not satisfy the rest of the schema ({})", key,
                                schema_where(path), printable(values[i].dump(), 64), *why));
    set.texts.push_back(values[i].dump(-1, ' ', false, Json::error_handler_t::strict));
    set.tags.push_back(0);
  }
  out_.nodes_[index].literals = out_.add_literals(std::move(set));
}

JsonSchema::JsonSchema() {
  SchemaNode any;
  any.types = kAnyType;
  any.low = -kScaledLimit;
  any.high = kScaledLimit;
  nodes_.push_back(any);
  boolean_literals_ = add_literals({{"false", "true"}, {0, 0}});
  null_literals_ = add_literals({{"null"}, {0}});
}

int JsonSchema::add_literals(LiteralSet set) {
  std::vector<size_t> order(set.texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return set.texts[a] < set.texts[b]; });
  LiteralSet sorted;
  for (size_t i : order) {
    if (!sorted.texts.empty() && sorted.texts.back() == set.texts[i]) continue;
    sorted.texts.push_back(std::move(set.texts[i]));
    sorted.tags.push_back(set.tags[i]);
  }
  literal_sets_.push_back(std::move(sorted));
  return static_cast<int>(literal_sets_.size() - 1);
}

JsonSchema JsonSchema::any_object() {
  JsonSchema schema;
  SchemaNode object;
  object.types = kObjectType;
  object.additional = 0;
  schema.nodes_.push_back(object);
  schema.root_ = static_cast<int>(schema.nodes_.size() - 1);
  return schema;
}

JsonSchema JsonSchema::compile(const Json& schema) {
  JsonSchema out;
  out.root_ = Compiler(out, schema).compile(schema, "", 0);
  return out;
}

}  // namespace glmrt::grammar
