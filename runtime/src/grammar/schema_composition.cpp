// The composition keywords of a schema: `$ref` (within the document,
// compiled once per target, a recursive one refused) and `anyOf`/`oneOf`,
// merged into one node when their branches are of different kinds (a value's
// first character tells the branch), enum/const values of any branch
// forming one literal set.
#include <glmrt/base/printable.h>

#include "schema_compiler.h"

#include <algorithm>
#include <utility>

namespace glmrt::grammar {
namespace {

// What may stand beside `$ref`, `anyOf` or `oneOf`: words that constrain nothing.
// `discriminator` (OpenAPI's, which Pydantic writes beside a oneOf) names the
// key that tells branches apart: their enum/const values of it do.
constexpr std::string_view kAnnotations[] = {"title",    "description", "default",
                                             "examples", "$comment",    "$schema",
                                             "$defs",    "definitions", "discriminator"};

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

}  // namespace

// Only annotations may stand beside `keyword` (what they would constrain
// is not merged into the branches or the referenced schema).
void JsonSchema::Compiler::refuse_siblings(const Json& schema, std::string_view keyword,
                                           const std::string& path) {
  for (const auto& [key, value] : schema.items())
    if (key != keyword &&
        std::find(std::begin(kAnnotations), std::end(kAnnotations), key) == std::end(kAnnotations))
      refuse_schema(path, key,
                    fmt::format("`{}` beside `{}` at {} is not supported: put it inside the {}",
                                printable(key, 64), keyword, schema_where(path),
                                keyword == "$ref" ? "referenced schema" : "branches"));
}

int JsonSchema::Compiler::compile_ref(const Json& schema, const std::string& path, int depth) {
  refuse_siblings(schema, "$ref", path);
  const Json& ref = schema["$ref"];
  if (!ref.is_string())
    refuse_schema(path, "$ref", fmt::format("`$ref` at {} must be a string", schema_where(path)));
  const std::string target = ref.get<std::string>();
  if (const auto done = compiled_refs_.find(target); done != compiled_refs_.end())
    return done->second;
  if (!target.starts_with("#"))
    refuse_schema(path, "$ref",
                  fmt::format("`$ref` {} at {} is not supported: only references within the schema "
                              "(#/$defs/NAME, #/definitions/NAME) are",
                              printable(target, 128), schema_where(path)));
  if (std::find(expanding_.begin(), expanding_.end(), target) != expanding_.end())
    refuse_schema(path, "$ref",
                  fmt::format("`$ref` {} at {} refers to a schema it is part of (a recursive "
                              "schema): constrained decoding needs a bounded nesting; write the "
                              "levels out instead",
                              printable(target, 128), schema_where(path)));
  const Json* resolved = nullptr;
  try {
    resolved = &document_.at(Json::json_pointer(target.substr(1)));
  } catch (const Json::exception&) {
    refuse_schema(path, "$ref",
                  fmt::format("`$ref` {} at {} names nothing in the schema", printable(target, 128),
                              schema_where(path)));
  }
  expanding_.push_back(target);
  const int index = compile(*resolved, ref_path(target), depth + 1);
  expanding_.pop_back();
  compiled_refs_.emplace(target, index);
  return index;
}

int JsonSchema::Compiler::compile_union(const Json& schema, const std::string& path, int depth) {
  if (schema.contains("anyOf") && schema.contains("oneOf"))
    refuse_schema(path, "oneOf",
                  fmt::format("`anyOf` and `oneOf` at {} together: give one", schema_where(path)));
  const char* key = schema.contains("anyOf") ? "anyOf" : "oneOf";
  refuse_siblings(schema, key, path);
  const Json& branches = schema[key];
  if (!branches.is_array() || branches.empty())
    refuse_schema(
        path, key,
        fmt::format("`{}` at {} must be a non-empty list of schemas", key, schema_where(path)));
  std::vector<int> nodes;
  for (size_t i = 0; i < branches.size(); ++i)
    nodes.push_back(compile(
        branches[i], fmt::format("{}{}{}[{}]", path, path.empty() ? "" : ".", key, i), depth + 1));
  return nodes.size() == 1 ? nodes[0] : merge_branches(nodes, path, key);
}

// One node for branches of different kinds (oneOf is then anyOf: no value
// can match two): each kind's keywords come from the branch of that kind,
// enum/const values of every branch form one set.
int JsonSchema::Compiler::merge_branches(const std::vector<int>& nodes, const std::string& path,
                                         const char* key) {
  SchemaNode merged;
  LiteralSet literals;
  uint8_t typed_kinds = 0, literal_kinds = 0;
  std::vector<int> objects;  // branches that allow objects by type
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
    // Typed object branches meet: their keys tell them apart (merge_objects).
    const uint8_t clash =
        (own_types & ((typed_kinds & ~kObjectType) | literal_kinds)) | (own_literals & typed_kinds);
    if (clash)
      refuse_schema(
          path, key,
          fmt::format("`{}` at {}: branch {} allows {} as an earlier branch does; constrained "
                      "decoding tells branches apart by a value's first character, so each "
                      "must be of its own type (enum/const values may share one; object "
                      "schemas may share objects)",
                      key, schema_where(path), i, kind_names(clash)));
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
      objects.push_back(nodes[i]);
      merged.properties = branch.properties;
      merged.required = branch.required;
      merged.additional = branch.additional;
      merged.keys = branch.keys;
    }
  }
  if (objects.size() > 1) {
    merge_objects(objects, path, key, merged);
    if (std::string_view(key) == "oneOf") check_branches_exclusive(merged, path);
  }
  if (!literals.texts.empty()) {
    merged.literals = out_.add_literals(std::move(literals));
    merged.literals_or_types = merged.types != 0;
    if (!merged.literals_or_types) merged.types = kAnyType;
  }
  out_.nodes_.push_back(std::move(merged));
  return static_cast<int>(out_.nodes_.size() - 1);
}

}  // namespace glmrt::grammar
