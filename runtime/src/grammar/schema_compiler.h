// The compiler of a JSON schema into JsonSchema's nodes, shared by the
// keyword readers (json_schema.cpp) and the composition keywords, $ref and
// anyOf/oneOf (schema_composition.cpp). Private to src/grammar.
#pragma once

#include <glmrt/grammar/json_schema.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::grammar {

/// "the schema", or the path in backquotes: where a message says a keyword is.
inline std::string schema_where(const std::string& path) {
  return path.empty() ? std::string("the schema") : "`" + path + "`";
}

[[noreturn]] inline void refuse_schema(const std::string& path, const std::string& keyword,
                                       const std::string& message) {
  throw SchemaError(path, keyword, message);
}

class JsonSchema::Compiler {
 public:
  /// `document` is the whole schema, what `$ref`s point into.
  Compiler(JsonSchema& out, const Json& document);
  /// The node of `schema`, found at `path`, nested `depth` deep.
  int compile(const Json& schema, const std::string& path, int depth);

 private:
  void refuse_siblings(const Json& schema, std::string_view keyword, const std::string& path);
  int compile_ref(const Json& schema, const std::string& path, int depth);
  int compile_union(const Json& schema, const std::string& path, int depth);
  int merge_branches(const std::vector<int>& nodes, const std::string& path, const char* key);
  /// The object part of a union of several object schemas (object_union.cpp).
  void merge_objects(const std::vector<int>& nodes, const std::string& path, const char* key,
                     SchemaNode& merged);
  void check_branches_exclusive(const SchemaNode& merged, const std::string& path);
  /// Whether nodes `a` and `b` allow the same values (compiled alike).
  bool same_schema(int a, int b) const;
  void needs_type(const Json& schema, const char* key, uint8_t types, uint8_t wanted,
                  const char* what, const std::string& path);
  void read_string_keywords(const Json& schema, const std::string& path, SchemaNode& node);
  void read_number_keywords(const Json& schema, const std::string& path, SchemaNode& node);
  void read_array_keywords(const Json& schema, const std::string& path, int depth, int index);
  void read_object_keywords(const Json& schema, const std::string& path, int depth, int index);
  void read_literals(const Json& schema, const std::string& path, int index);

  JsonSchema& out_;
  const Json& document_;
  std::map<std::string, int> compiled_refs_;  // a schema referred to twice is one node
  std::vector<std::string> expanding_;        // the `$ref`s being compiled, outermost first
};

}  // namespace glmrt::grammar
