#include <glmrt/base/printable.h>
#include <glmrt/grammar/json_schema.h>

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
                                               "definitions"};

// What may stand beside `$ref`, `anyOf` or `oneOf`: words that constrain nothing.
constexpr std::string_view kAnnotations[] = {"title",    "description", "default", "examples",
                                             "$comment", "$schema",     "$defs",   "definitions"};

// A value's first character tells its kind: one bit per kind (integers and
// numbers are one kind, numbers), as TypeBit without kIntegerType.
uint8_t kinds_of_types(uint8_t types) {
  uint8_t kinds = types & static_cast<uint8_t>(~kIntegerType);
  if (types & kIntegerType) kinds |= kNumberType;
  return kinds;
}

uint8_t kind_of_text(const std::string& json) {
  switch (json.empty() ? '\0' : json[0]) {
    case '{':
      return kObjectType;
    case '[':
      return kArrayType;
    case '"':
      return kStringType;
    case 't':
    case 'f':
      return kBooleanType;
    case 'n':
      return kNullType;
    default:
      return kNumberType;
  }
}

std::string kind_names(uint8_t kinds) {
  static constexpr std::pair<uint8_t, std::string_view> kNames[] = {
      {kObjectType, "objects"}, {kArrayType, "arrays"},     {kStringType, "strings"},
      {kNumberType, "numbers"}, {kBooleanType, "booleans"}, {kNullType, "null"}};
  std::string names;
  for (const auto& [bit, name] : kNames)
    if (kinds & bit) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

// "#/$defs/Address" -> "$defs.Address": where a referenced schema's errors are.
std::string ref_path(const std::string& ref) {
  std::string path = ref.substr(ref.starts_with("#/") ? 2 : 1);
  std::replace(path.begin(), path.end(), '/', '.');
  return path;
}

Scaled power_of_ten(int n) {
  Scaled p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// The widest numbers the automaton writes: kIntegerDigits nines, every
// fraction digit nine too.
const Scaled kScaledLimit = power_of_ten(kIntegerDigits + kFractionDigits) - 1;
const Scaled kUnit = power_of_ten(kFractionDigits);

std::string where_of(const std::string& path) {
  return path.empty() ? std::string("the schema") : "`" + path + "`";
}

[[noreturn]] void refuse(const std::string& path, const std::string& keyword,
                         const std::string& message) {
  throw SchemaError(path, keyword, message);
}

uint8_t type_bit(const Json& name, const std::string& path) {
  static const std::map<std::string, uint8_t, std::less<>> bits = {
      {"object", kObjectType}, {"array", kArrayType},     {"string", kStringType},
      {"number", kNumberType}, {"integer", kIntegerType}, {"boolean", kBooleanType},
      {"null", kNullType}};
  if (name.is_string())
    if (const auto it = bits.find(name.get<std::string>()); it != bits.end()) return it->second;
  refuse(path, "type",
         fmt::format("`type` at {} is {}: expected object, array, string, number, integer, "
                     "boolean or null",
                     where_of(path), printable(name.dump(), 64)));
}

uint32_t count_keyword(const Json& schema, const char* key, const std::string& path) {
  const Json& v = schema[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
    refuse(path, key,
           fmt::format("`{}` at {} must be a whole number from 0 to {}, found {}", key,
                       where_of(path), INT32_MAX, printable(v.dump(), 64)));
  return static_cast<uint32_t>(v.get<int64_t>());
}

double number_keyword(const Json& schema, const char* key, const std::string& path) {
  const Json& v = schema[key];
  if (!v.is_number())
    refuse(path, key,
           fmt::format("`{}` at {} must be a number, found {}", key, where_of(path),
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

class JsonSchema::Compiler {
 public:
  Compiler(JsonSchema& out, const Json& document) : out_(out), document_(document) {}

  int compile(const Json& schema, const std::string& path, int depth) {
    if (depth > kMaxSchemaDepth)
      refuse(path, "",
             fmt::format("the schema nests deeper than {} levels at {}", kMaxSchemaDepth,
                         where_of(path)));
    if (out_.nodes_.size() >= kMaxSchemaNodes)
      refuse(path, "", fmt::format("the schema has more than {} subschemas", kMaxSchemaNodes));
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return 0;
      refuse(path, "",
             fmt::format("the schema at {} is `false`: no value satisfies it", where_of(path)));
    }
    if (!schema.is_object())
      refuse(path, "",
             fmt::format("the schema at {} must be an object, found {}", where_of(path),
                         schema.type_name()));
    for (const auto& [key, value] : schema.items())
      if (std::find(std::begin(kKnownKeywords), std::end(kKnownKeywords), key) ==
          std::end(kKnownKeywords))
        refuse(path, key,
               fmt::format("`{}` at {} is not supported: constrained decoding knows type, enum, "
                           "const, properties, required, additionalProperties, items, minItems, "
                           "maxItems, minLength, maxLength, minimum, maximum, exclusiveMinimum, "
                           "exclusiveMaximum (and the annotations title, description, default, "
                           "examples, $comment, $schema), format, anyOf, oneOf, $ref and $defs",
                           printable(key, 64), where_of(path)));
    for (const char* key : {"$defs", "definitions"})
      if (schema.contains(key) && !schema[key].is_object())
        refuse(path, key,
               fmt::format("`{}` at {} must be an object of named schemas", key, where_of(path)));
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
          refuse(path, "type", fmt::format("`type` at {} is an empty list", where_of(path)));
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

 private:
  // Only annotations may stand beside `keyword` (what they would constrain
  // is not merged into the branches or the referenced schema).
  void refuse_siblings(const Json& schema, std::string_view keyword, const std::string& path) {
    for (const auto& [key, value] : schema.items())
      if (key != keyword && std::find(std::begin(kAnnotations), std::end(kAnnotations), key) ==
                                std::end(kAnnotations))
        refuse(path, key,
               fmt::format("`{}` beside `{}` at {} is not supported: put it inside the {}",
                           printable(key, 64), keyword, where_of(path),
                           keyword == "$ref" ? "referenced schema" : "branches"));
  }

  int compile_ref(const Json& schema, const std::string& path, int depth) {
    refuse_siblings(schema, "$ref", path);
    const Json& ref = schema["$ref"];
    if (!ref.is_string())
      refuse(path, "$ref", fmt::format("`$ref` at {} must be a string", where_of(path)));
    const std::string target = ref.get<std::string>();
    if (const auto done = compiled_refs_.find(target); done != compiled_refs_.end())
      return done->second;
    if (!target.starts_with("#"))
      refuse(path, "$ref",
             fmt::format("`$ref` {} at {} is not supported: only references within the schema "
                         "(#/$defs/NAME, #/definitions/NAME) are",
                         printable(target, 128), where_of(path)));
    if (std::find(expanding_.begin(), expanding_.end(), target) != expanding_.end())
      refuse(path, "$ref",
             fmt::format("`$ref` {} at {} refers to a schema it is part of (a recursive "
                         "schema): constrained decoding needs a bounded nesting; write the "
                         "levels out instead",
                         printable(target, 128), where_of(path)));
    const Json* resolved = nullptr;
    try {
      resolved = &document_.at(Json::json_pointer(target.substr(1)));
    } catch (const Json::exception&) {
      refuse(path, "$ref",
             fmt::format("`$ref` {} at {} names nothing in the schema", printable(target, 128),
                         where_of(path)));
    }
    expanding_.push_back(target);
    const int index = compile(*resolved, ref_path(target), depth + 1);
    expanding_.pop_back();
    compiled_refs_.emplace(target, index);
    return index;
  }

  int compile_union(const Json& schema, const std::string& path, int depth) {
    if (schema.contains("anyOf") && schema.contains("oneOf"))
      refuse(path, "oneOf",
             fmt::format("`anyOf` and `oneOf` at {} together: give one", where_of(path)));
    const char* key = schema.contains("anyOf") ? "anyOf" : "oneOf";
    refuse_siblings(schema, key, path);
    const Json& branches = schema[key];
    if (!branches.is_array() || branches.empty())
      refuse(path, key,
             fmt::format("`{}` at {} must be a non-empty list of schemas", key, where_of(path)));
    std::vector<int> nodes;
    for (size_t i = 0; i < branches.size(); ++i)
      nodes.push_back(compile(branches[i],
                              fmt::format("{}{}{}[{}]", path, path.empty() ? "" : ".", key, i),
                              depth + 1));
    return nodes.size() == 1 ? nodes[0] : merge_branches(nodes, path, key);
  }

  // One node for branches of different kinds (oneOf is then anyOf: no value
  // can match two): each kind's keywords come from the branch of that kind,
  // enum/const values of every branch form one set.
  int merge_branches(const std::vector<int>& nodes, const std::string& path, const char* key) {
    SchemaNode merged;
    merged.low = -kScaledLimit;
    merged.high = kScaledLimit;
    LiteralSet literals;
    uint8_t typed_kinds = 0, literal_kinds = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const SchemaNode branch = out_.nodes_[nodes[i]];
      uint8_t own_literals = 0, own_types = 0;
      if (branch.literals >= 0)
        for (const std::string& text : out_.literals(branch.literals).texts) {
          own_literals |= kind_of_text(text);
          literals.texts.push_back(text);
          literals.tags.push_back(0);
        }
      if (branch.literals < 0 || branch.literals_or_types) own_types = kinds_of_types(branch.types);
      const uint8_t clash =
          (own_types & (typed_kinds | literal_kinds)) | (own_literals & typed_kinds);
      if (clash)
        refuse(path, key,
               fmt::format("`{}` at {}: branch {} allows {} as an earlier branch does; constrained "
                           "decoding tells branches apart by a value's first character, so each "
                           "must be of its own type (enum/const values may share one)",
                           key, where_of(path), i, kind_names(clash)));
      typed_kinds |= own_types;
      literal_kinds |= own_literals;
      if (!own_types) continue;
      merged.types |= branch.types & static_cast<uint8_t>(~(kIntegerType | kNumberType));
      if (own_types & kNumberType) {
        merged.types |= branch.types & (kIntegerType | kNumberType);
        merged.bounded = branch.bounded;
        merged.low = branch.low;
        merged.high = branch.high;
      }
      if (own_types & kStringType) {
        merged.min_length = branch.min_length;
        merged.max_length = branch.max_length;
        merged.format = branch.format;
      }
      if (own_types & kArrayType) {
        merged.items = branch.items;
        merged.min_items = branch.min_items;
        merged.max_items = branch.max_items;
      }
      if (own_types & kObjectType) {
        merged.properties = branch.properties;
        merged.required = branch.required;
        merged.additional = branch.additional;
        merged.keys = branch.keys;
      }
    }
    if (!literals.texts.empty()) {
      merged.literals = out_.add_literals(std::move(literals));
      merged.literals_or_types = merged.types != 0;
      if (!merged.literals_or_types) merged.types = kAnyType;
    }
    out_.nodes_.push_back(std::move(merged));
    return static_cast<int>(out_.nodes_.size() - 1);
  }

  void needs_type(const Json& schema, const char* key, uint8_t types, uint8_t wanted,
                  const char* what, const std::string& path) {
    if (schema.contains(key) && !(types & wanted))
      refuse(path, key,
             fmt::format("`{}` at {} applies to {}, which its `type` does not allow", key,
                         where_of(path), what));
  }

  void read_string_keywords(const Json& schema, const std::string& path, SchemaNode& node) {
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
        refuse(path, "format",
               fmt::format("`format` {} at {} is not supported: constrained decoding writes {}",
                           printable(name.dump(), 64), where_of(path), kStringFormatNames));
      if (schema.contains("minLength") || schema.contains("maxLength"))
        refuse(path, "format",
               fmt::format("`format` with `minLength` or `maxLength` at {} is not supported",
                           where_of(path)));
      node.format = *format;
    }
    if (node.min_length > node.max_length)
      refuse(path, "minLength",
             fmt::format("`minLength` {} at {} is more than `maxLength` {}", node.min_length,
                         where_of(path), node.max_length));
  }

  void read_number_keywords(const Json& schema, const std::string& path, SchemaNode& node) {
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
      refuse(path, "minimum",
             fmt::format("no {} at {} lies within its `minimum`/`maximum` (numbers are written "
                         "with at most {} digits before the point and {} after it)",
                         (node.types & kNumberType) ? "number" : "integer", where_of(path),
                         kIntegerDigits, kFractionDigits));
  }

  void read_array_keywords(const Json& schema, const std::string& path, int depth, int index) {
    const uint8_t types = out_.nodes_[index].types;
    for (const char* key : {"items", "minItems", "maxItems"})
      needs_type(schema, key, types, kArrayType, "arrays", path);
    int items = 0;
    if (schema.contains("items")) {
      if (schema["items"].is_array())
        refuse(path, "items",
               fmt::format("`items` at {} is a list (a tuple): only one schema for every item "
                           "is supported",
                           where_of(path)));
      items = compile(schema["items"], path + (path.empty() ? "" : ".") + "items", depth + 1);
    }
    SchemaNode& node = out_.nodes_[index];
    node.items = items;
    if (schema.contains("minItems")) node.min_items = count_keyword(schema, "minItems", path);
    if (schema.contains("maxItems")) node.max_items = count_keyword(schema, "maxItems", path);
    if (node.min_items > node.max_items)
      refuse(path, "minItems",
             fmt::format("`minItems` {} at {} is more than `maxItems` {}", node.min_items,
                         where_of(path), node.max_items));
  }

  void read_object_keywords(const Json& schema, const std::string& path, int depth, int index) {
    const uint8_t types = out_.nodes_[index].types;
    for (const char* key : {"properties", "required", "additionalProperties"})
      needs_type(schema, key, types, kObjectType, "objects", path);
    const std::string prefix = path + (path.empty() ? "" : ".");
    std::vector<Property> properties;
    if (schema.contains("properties")) {
      const Json& given = schema["properties"];
      if (!given.is_object())
        refuse(path, "properties",
               fmt::format("`properties` at {} must be an object", where_of(path)));
      if (given.size() > kMaxProperties)
        refuse(path, "properties",
               fmt::format("`properties` at {} holds {} properties; at most {} are supported",
                           where_of(path), given.size(), kMaxProperties));
      for (const auto& [name, sub] : given.items())
        properties.push_back({name, compile(sub, prefix + "properties." + name, depth + 1)});
    }
    uint64_t required = 0;
    if (schema.contains("required")) {
      const Json& given = schema["required"];
      if (!given.is_array())
        refuse(path, "required",
               fmt::format("`required` at {} must be a list of property names", where_of(path)));
      for (const Json& name : given) {
        const auto it = std::find_if(properties.begin(), properties.end(),
                                     [&](const Property& p) { return name == p.name; });
        if (it == properties.end())
          refuse(path, "required",
                 fmt::format("`required` at {} names {}, which `properties` does not define",
                             where_of(path), printable(name.dump(), 64)));
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

  void read_literals(const Json& schema, const std::string& path, int index) {
    if (schema.contains("enum") && schema.contains("const"))
      refuse(path, "const",
             fmt::format("`enum` and `const` at {} together: give one", where_of(path)));
    std::vector<Json> values;
    const char* key = schema.contains("enum") ? "enum" : "const";
    if (schema.contains("enum")) {
      const Json& given = schema["enum"];
      if (!given.is_array() || given.empty())
        refuse(path, "enum", fmt::format("`enum` at {} must be a non-empty list", where_of(path)));
      values.assign(given.begin(), given.end());
    } else if (schema.contains("const")) {
      values.push_back(schema["const"]);
    } else {
      return;
    }
    LiteralSet set;
    for (size_t i = 0; i < values.size(); ++i) {
      if (const auto why = out_.problem(values[i], index))
        refuse(path, key,
               fmt::format("`{}` at {}: {} does not satisfy the rest of the schema ({})", key,
                           where_of(path), printable(values[i].dump(), 64), *why));
      set.texts.push_back(values[i].dump(-1, ' ', false, Json::error_handler_t::strict));
      set.tags.push_back(0);
    }
    out_.nodes_[index].literals = out_.add_literals(std::move(set));
  }

  JsonSchema& out_;
  const Json& document_;                      // what `$ref`s point into
  std::map<std::string, int> compiled_refs_;  // a schema referred to twice is one node
  std::vector<std::string> expanding_;        // the `$ref`s being compiled, outermost first
};

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
