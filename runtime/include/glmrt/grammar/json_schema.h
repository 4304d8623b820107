// The JSON Schema subset constrained decoding honours, compiled into a tree
// of nodes the byte automaton (json_machine.h) walks. Supported: `type` (one
// name or a list), `enum`, `const` (any JSON values, objects and arrays
// too), `properties`, `required`, `additionalProperties` (false, true or a
// schema), `items`, `minItems`, `maxItems`, `minLength`, `maxLength`,
// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `format`
// (string_format.h), `anyOf`/`oneOf` whose branches are of different types
// (the first character tells the branch: Optional[int] is an integer or
// null) or objects told apart by their keys and enum/const values
// (Union[Cat, Dog]; oneOf needs each pair to differ in a key one requires and
// the other lacks, or in the values of a key both require), `$ref` to a schema of the same
// document (`#/$defs/...`, `#/definitions/...`; a schema that refers to
// itself is refused: its nesting would be unbounded), and the annotations
// `title`, `description`, `default`, `examples`, `$comment`, `$schema`,
// `$defs`, `definitions`. Any other keyword, or one that cannot apply
// (maxLength on an integer), is refused with a SchemaError naming it and
// where it is, never ignored.
#pragma once

#include <glmrt/base/error.h>
#include <glmrt/grammar/string_format.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace glmrt::grammar {

using Json = nlohmann::ordered_json;

/// A schema this engine refuses: `path` is where (e.g. `properties.age`),
/// `keyword` what (empty when the value itself is wrong).
class SchemaError : public Error {
 public:
  SchemaError(std::string path, std::string keyword, const std::string& message)
      : Error(message), path_(std::move(path)), keyword_(std::move(keyword)) {}
  const std::string& path() const { return path_; }
  const std::string& keyword() const { return keyword_; }

 private:
  std::string path_, keyword_;
};

/// Numbers are compared as integers in units of 10^-kFractionDigits: a
/// number holds at most kFractionDigits digits after the point and
/// kIntegerDigits before it (15: every such integer is exact as a double,
/// which is what JavaScript clients parse it into), so the automaton's
/// bounds check is exact.
using Scaled = __int128;
inline constexpr int kIntegerDigits = 15;
inline constexpr int kFractionDigits = 9;
// An exponent of at most two digits keeps every number a finite double (a
// third let 1e902 through: JSON parsers refuse it or read infinity).
inline constexpr int kExponentDigits = 2;

enum TypeBit : uint8_t {
  kObjectType = 1,
  kArrayType = 2,
  kStringType = 4,
  kNumberType = 8,    // any number (integers included)
  kIntegerType = 16,  // integers only (when kNumberType is not set)
  kBooleanType = 32,
  kNullType = 64,
  kAnyType = 127,
};

inline constexpr uint32_t kNoLimit = UINT32_MAX;

/// Sorted, distinct JSON texts (enum values, or an object's quoted property
/// names); `tags[i]` is what text i stands for (a property's index).
struct LiteralSet {
  std::vector<std::string> texts;
  std::vector<int> tags;
};

struct Property {
  std::string name;
  int node = 0;
  // Object unions: the value is an enum/const literal set whose tags are
  // masks of the branches each value belongs to (it tells them apart).
  bool tells_branches = false;
};

/// One object schema of an anyOf/oneOf of several (masks over the union
/// node's `properties`).
struct ObjectBranch {
  int node = 0;           // the branch as compiled on its own (for checks)
  uint64_t declares = 0;  // the properties it lists (it allows no others)
  uint64_t required = 0;
};

struct SchemaNode {
  uint8_t types = 0;  // TypeBit set; unused when `literals` >= 0 (but see below)
  int literals = -1;  // enum / const: the value is one of these texts
  // anyOf of literals and types: a value starting as a literal does is one
  // of them, any other is of `types` (their first characters never meet).
  bool literals_or_types = false;
  // strings (code points; an escape counts as one)
  uint32_t min_length = 0, max_length = kNoLimit;
  StringFormat format = StringFormat::none;  // strings: a pattern they match
  // numbers: bounds in units of 10^-kFractionDigits; without any, an
  // exponent is allowed too
  bool bounded = false;
  Scaled low = 0, high = 0;
  // arrays
  int items = 0;
  uint32_t min_items = 0, max_items = kNoLimit;
  // objects: each property at most once, in any order
  std::vector<Property> properties;
  uint64_t required = 0;  // bit i = properties[i]
  int additional = 0;     // node of other keys' values, -1 = no other keys
  int keys = -1;          // literal set of the quoted property names (tag = index)
  // anyOf/oneOf of several object schemas: `properties` holds every branch's
  // (a name shared by branches has one schema in all, or tells them apart),
  // `required` is unused; an object's keys and values so far leave some
  // branches possible, and it closes when one of them has all it requires.
  std::vector<ObjectBranch> object_branches;
};

inline constexpr size_t kMaxObjectBranches = 32;  // a frame's branch mask is 32 bits

class JsonSchema {
 public:
  /// Any JSON object (response_format json_object).
  static JsonSchema any_object();
  /// Throws SchemaError. Objects that declare `properties` and say nothing
  /// of `additionalProperties` allow no other keys (what OpenAI's strict mode
  /// requires be said explicitly); without `properties` they allow any.
  static JsonSchema compile(const Json& schema);

  int root() const { return root_; }
  const SchemaNode& node(int index) const { return nodes_[index]; }
  const LiteralSet& literals(int index) const { return literal_sets_[index]; }
  /// The literal sets of `true`/`false` and of `null`.
  int boolean_literals() const { return boolean_literals_; }
  int null_literals() const { return null_literals_; }

  /// Why `value` does not satisfy node `index` (the root when -1), with the
  /// path to the part that fails; nothing when it does.
  std::optional<std::string> problem(const Json& value, int index = -1) const;

 private:
  class Compiler;
  JsonSchema();
  int add_literals(LiteralSet set);  // sorted, duplicates dropped
  std::vector<SchemaNode> nodes_;    // nodes_[0]: any value
  std::vector<LiteralSet> literal_sets_;
  int root_ = 0;
  int boolean_literals_ = 0, null_literals_ = 0;
};

/// The number of units of 10^-kFractionDigits in `value` rounded to the
/// nearest (a value within 1e-6 of a unit counts as that unit).
Scaled scaled_value(double value);

}  // namespace glmrt::grammar
