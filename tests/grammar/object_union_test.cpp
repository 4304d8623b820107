// anyOf/oneOf of object schemas as Pydantic (a discriminated Union[Cat, Dog,
// Lizard], a plain Union of models) and Zod (z.union of objects) generate
// them: the automaton takes each branch's objects, refuses mixtures of two
// branches, never reaches a dead end, and what it finishes satisfies the
// schema; unions it cannot decode are refused naming the keyword.
#include "grammar_test_support.h"

#include <gtest/gtest.h>

#include <string>

namespace glmrt::grammar {
namespace {

using testing::run;
using testing::schema_of;

// class Cat(BaseModel): pet_type: Literal['cat']; meows: int
// class Dog(BaseModel): pet_type: Literal['dog']; barks: float
// class Lizard(BaseModel): pet_type: Literal['reptile', 'lizard']; scales: bool
// class Owner(BaseModel): pet: Union[Cat, Dog, Lizard] = Field(discriminator='pet_type'); n: int
const char* const kPydanticDiscriminated = R"({
  "$defs": {
    "Cat": {"properties": {"pet_type": {"const": "cat", "title": "Pet Type", "type": "string"},
                           "meows": {"title": "Meows", "type": "integer"}},
            "required": ["pet_type", "meows"], "title": "Cat", "type": "object"},
    "Dog": {"properties": {"pet_type": {"const": "dog", "title": "Pet Type", "type": "string"},
                           "barks": {"title": "Barks", "type": "number"}},
            "required": ["pet_type", "barks"], "title": "Dog", "type": "object"},
    "Lizard": {"properties": {"pet_type": {"enum": ["reptile", "lizard"], "title": "Pet Type",
                                           "type": "string"},
                              "scales": {"title": "Scales", "type": "boolean"}},
               "required": ["pet_type", "scales"], "title": "Lizard", "type": "object"}},
  "properties": {
    "pet": {"discriminator": {"mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog",
                                          "lizard": "#/$defs/Lizard",
                                          "reptile": "#/$defs/Lizard"},
                              "propertyName": "pet_type"},
            "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"},
                      {"$ref": "#/$defs/Lizard"}],
            "title": "Pet"},
    "n": {"title": "N", "type": "integer"}},
  "required": ["pet", "n"], "title": "Owner", "type": "object"})";

// class Cat(BaseModel): name: str; meow: bool
// class Dog(BaseModel): name: str; bark: bool; age: Optional[int] = None
// class Pets(BaseModel): pets: list[Union[Cat, Dog]]
const char* const kPydanticPlainUnion = R"({
  "$defs": {
    "Cat": {"properties": {"name": {"title": "Name", "type": "string"},
                           "meow": {"title": "Meow", "type": "boolean"}},
            "required": ["name", "meow"], "title": "Cat", "type": "object"},
    "Dog": {"properties": {"name": {"title": "Name", "type": "string"},
                           "bark": {"title": "Bark", "type": "boolean"},
                           "age": {"anyOf": [{"type": "integer"}, {"type": "null"}],
                                   "default": null, "title": "Age"}},
            "required": ["name", "bark"], "title": "Dog", "type": "object"}},
  "properties": {"pets": {"items": {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]},
                          "title": "Pets", "type": "array"}},
  "required": ["pets"], "title": "Pets", "type": "object"})";

// z.object({ shape: z.union([z.object({ kind: z.literal("circle"), r: z.number() }),
//   z.object({ kind: z.literal("rect"), w: z.number(), h: z.number() })]).nullable() })
const char* const kZodUnion = R"({
  "type": "object",
  "properties": {"shape": {"anyOf": [
    {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"},
                                      "r": {"type": "number"}},
     "required": ["kind", "r"], "additionalProperties": false},
    {"type": "object", "properties": {"kind": {"type": "string", "const": "rect"},
                                      "w": {"type": "number"}, "h": {"type": "number"}},
     "required": ["kind", "w", "h"], "additionalProperties": false},
    {"type": "null"}]}},
  "required": ["shape"], "additionalProperties": false,
  "$schema": "http://json-schema.org/draft-07/schema#"})";

bool accepts(const char* schema, const std::string& text) {
  JsonMachine machine(schema_of(schema));
  const auto r = run(machine, text);
  return r.taken == text.size() && r.complete;
}

TEST(ObjectUnion, PydanticDiscriminatedUnionTakesEachBranchAndNoMixture) {
  for (const char* pet : {R"({"pet_type": "cat", "meows": 3})", R"({"pet_type":"dog","barks":0.5})",
                          R"({"scales": true, "pet_type": "lizard"})",
                          R"({"pet_type": "reptile", "scales": false})"}) {
    const std::string owner = std::string(R"({"pet": )") + pet + R"(, "n": 1})";
    EXPECT_TRUE(accepts(kPydanticDiscriminated, owner)) << owner;
    EXPECT_EQ(schema_of(kPydanticDiscriminated)->problem(Json::parse(owner)), std::nullopt);
  }
  for (const char* pet : {R"({"pet_type": "cat", "barks": 3})",   // a dog's key in a cat
                          R"({"meows": 3, "pet_type": "dog"})",   // a cat's key, then a dog's value
                          R"({"pet_type": "cat"})",               // the cat's meows missing
                          R"({"pet_type": "bird", "meows": 1})",  // no branch's value
                          R"({"pet_type": "cat", "meows": 1.5})",  // the cat's meows is an integer
                          R"({"scales": true, "meows": 1})"}) {    // keys of two branches
    const std::string owner = std::string(R"({"pet": )") + pet + R"(, "n": 1})";
    EXPECT_FALSE(accepts(kPydanticDiscriminated, owner)) << owner;
    EXPECT_NE(schema_of(kPydanticDiscriminated)->problem(Json::parse(owner)), std::nullopt);
  }
  // The refusal comes at the byte that mixes branches, not at the end.
  JsonMachine machine(schema_of(kPydanticDiscriminated));
  const std::string mixed = R"({"pet": {"meows": 3, "pet_type": "d)";
  EXPECT_EQ(run(machine, mixed).taken, mixed.size() - 1);
}

TEST(ObjectUnion, PlainUnionOfModelsIsToldApartByTheirKeys) {
  EXPECT_TRUE(
      accepts(kPydanticPlainUnion,
              R"({"pets": [{"name": "Tom", "meow": true},)"
              R"( {"bark": false, "name": "Rex", "age": null}, {"name": "Ed", "bark": true}]})"));
  EXPECT_FALSE(
      accepts(kPydanticPlainUnion, R"({"pets": [{"name": "Tom", "meow": true, "bark": true}]})"));
  EXPECT_FALSE(
      accepts(kPydanticPlainUnion, R"({"pets": [{"name": "Tom", "age": 3, "meow": true}]})"));
  EXPECT_FALSE(accepts(kPydanticPlainUnion, R"({"pets": [{"name": "Tom"}]})"));
  EXPECT_FALSE(accepts(kPydanticPlainUnion, R"({"pets": [{"name": "Tom", "purr": true}]})"));
}

TEST(ObjectUnion, ZodUnionOfObjectsOrNull) {
  EXPECT_TRUE(accepts(kZodUnion, R"({"shape": {"kind": "circle", "r": 2}})"));
  EXPECT_TRUE(accepts(kZodUnion, R"({"shape": {"h": 1, "kind": "rect", "w": 2}})"));
  EXPECT_TRUE(accepts(kZodUnion, R"({"shape": null})"));
  EXPECT_FALSE(accepts(kZodUnion, R"({"shape": {"kind": "circle", "w": 2}})"));
  EXPECT_FALSE(accepts(kZodUnion, R"({"shape": {"h": 1, "kind": "circle"}})"));
  EXPECT_FALSE(accepts(kZodUnion, R"({"shape": {"kind": "rect", "w": 2}})"));
}

// Random walks over the allowed bytes: never a dead end, and every finished
// text satisfies the schema.
TEST(ObjectUnion, RandomWalksFinishValidAndNeverStick) {
  for (const char* text : {kPydanticDiscriminated, kPydanticPlainUnion, kZodUnion}) {
    const int finished = testing::random_walks(schema_of(text), 11, 150, 300,
                                               [](int b) { return b >= 0x20 && b < 0x7F; });
    EXPECT_GT(finished, 50);
  }
}

void expect_refused(const char* schema, const std::string& keyword, const std::string& words) {
  const SchemaError e = testing::schema_refusal(schema);
  EXPECT_EQ(e.keyword(), keyword) << e.what();
  EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
}

TEST(ObjectUnion, UnionsItCannotDecodeAreRefusedNamingWhy) {
  // A shared key whose schemas differ and are not enum/const values.
  expect_refused(R"({"anyOf": [
      {"type": "object", "properties": {"size": {"type": "integer"}}},
      {"type": "object", "properties": {"size": {"type": "string"}}}]})",
                 "anyOf", "`size`");
  // A branch that allows keys it does not list.
  expect_refused(R"({"anyOf": [
      {"type": "object", "properties": {"a": {"type": "integer"}}},
      {"type": "object", "properties": {"b": {"type": "integer"}},
       "additionalProperties": true}]})",
                 "anyOf", "branch 1 allows keys");
  // oneOf whose branches one object may both satisfy (both keys optional).
  expect_refused(R"({"oneOf": [
      {"type": "object", "properties": {"a": {"type": "integer"}}},
      {"type": "object", "properties": {"b": {"type": "integer"}}}]})",
                 "oneOf", "branch 0 and branch 1");
  // ... which anyOf allows.
  EXPECT_TRUE(accepts(R"({"anyOf": [
      {"type": "object", "properties": {"a": {"type": "integer"}}},
      {"type": "object", "properties": {"b": {"type": "integer"}}}]})",
                      "{}"));
}

}  // namespace
}  // namespace glmrt::grammar
