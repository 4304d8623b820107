// The schema subset: every unsupported or inapplicable keyword is refused
// naming it and where it is; the validator the tests check answers with.
#include <glmrt/grammar/json_schema.h>

#include <gtest/gtest.h>

namespace glmrt::grammar {
namespace {

struct Refusal {
  std::string path, keyword, message;
};

Refusal refusal_of(std::string_view schema) {
  try {
    JsonSchema::compile(Json::parse(schema));
  } catch (const SchemaError& e) {
    return {e.path(), e.keyword(), e.what()};
  }
  ADD_FAILURE() << "accepted: " << schema;
  return {};
}

TEST(JsonSchema, UnsupportedKeywordsAreNamedWithTheirPath) {
  const auto pattern = refusal_of(R"({"type": "object", "properties": {"name":
                                      {"type": "string", "pattern": "^a"}}})");
  EXPECT_EQ(pattern.keyword, "pattern");
  EXPECT_EQ(pattern.path, "properties.name");
  EXPECT_NE(pattern.message.find("`pattern` at `properties.name` is not supported"),
            std::string::npos)
      << pattern.message;
  for (const char* keyword : {"$ref", "anyOf", "oneOf", "allOf", "format", "minProperties",
                              "uniqueItems", "$defs", "not", "multipleOf", "prefixItems"}) {
    const auto r = refusal_of(fmt::format(R"({{"type": "array", "items": {{"{}": 1}}}})", keyword));
    EXPECT_EQ(r.keyword, keyword);
    EXPECT_EQ(r.path, "items");
  }
  EXPECT_EQ(refusal_of(R"({"pattern": "^a"})").message.find("`pattern` at the schema"), 0u);
}

TEST(JsonSchema, KeywordsThatCannotApplyAreRefused) {
  EXPECT_EQ(refusal_of(R"({"type": "integer", "maxLength": 3})").keyword, "maxLength");
  EXPECT_EQ(refusal_of(R"({"type": "string", "minimum": 3})").keyword, "minimum");
  EXPECT_EQ(refusal_of(R"({"type": "string", "items": {}})").keyword, "items");
  EXPECT_EQ(refusal_of(R"({"type": "array", "properties": {}})").keyword, "properties");
  EXPECT_EQ(refusal_of(R"({"type": "strin"})").keyword, "type");
  EXPECT_EQ(refusal_of(R"({"type": []})").keyword, "type");
}

TEST(JsonSchema, UnsatisfiableSchemasAreRefused) {
  EXPECT_EQ(refusal_of(R"({"type": "string", "minLength": 4, "maxLength": 3})").keyword,
            "minLength");
  EXPECT_EQ(refusal_of(R"({"type": "integer", "minimum": 1.2, "maximum": 1.8})").keyword,
            "minimum");
  EXPECT_EQ(refusal_of(R"({"type": "array", "minItems": 3, "maxItems": 2})").keyword, "minItems");
  EXPECT_EQ(refusal_of(R"({"type": "object", "properties": {"a": {}}, "required": ["b"]})").keyword,
            "required");
  EXPECT_EQ(refusal_of(R"({"type": "string", "enum": ["a", 1]})").keyword, "enum");
  EXPECT_EQ(refusal_of(R"({"enum": []})").keyword, "enum");
  EXPECT_EQ(refusal_of(R"({"type": "array", "items": [{}]})").keyword, "items");
  EXPECT_EQ(refusal_of(R"({"type": "string", "maxLength": -1})").keyword, "maxLength");
  EXPECT_EQ(refusal_of(R"({"properties": {"a": false}})").path, "properties.a");
  std::string many = R"({"type": "object", "properties": {)";
  for (int i = 0; i < 65; ++i) many += fmt::format(R"({}"p{}": {{}})", i ? "," : "", i);
  EXPECT_EQ(refusal_of(many + "}}").keyword, "properties");
  std::string deep = "{}";
  for (int i = 0; i < 40; ++i) deep = R"({"type": "array", "items": )" + deep + "}";
  EXPECT_EQ(refusal_of(deep).keyword, "");
}

TEST(JsonSchema, AnnotationsAndBoundsAreRead) {
  const JsonSchema s = JsonSchema::compile(Json::parse(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "t", "description": "d",
    "type": "object", "properties": {
      "n": {"type": "integer", "minimum": 0, "maximum": 100, "default": 5, "examples": [1]},
      "s": {"type": "string", "maxLength": 2, "$comment": "short"}},
    "required": ["n"], "additionalProperties": false})"));
  EXPECT_EQ(s.problem(Json::parse(R"({"n": 100, "s": "ab"})")), std::nullopt);
  EXPECT_NE(s.problem(Json::parse(R"({"n": 101})")), std::nullopt);
  EXPECT_NE(s.problem(Json::parse(R"({"n": 1.5})")), std::nullopt);
  EXPECT_NE(s.problem(Json::parse(R"({"s": "a"})")), std::nullopt);
  EXPECT_NE(s.problem(Json::parse(R"({"n": 1, "s": "abc"})")), std::nullopt);
  EXPECT_NE(s.problem(Json::parse(R"({"n": 1, "x": 1})")), std::nullopt);
  EXPECT_EQ(s.problem(Json::parse(R"({"n": 1.0})")), std::nullopt);  // a whole number
}

}  // namespace
}  // namespace glmrt::grammar
