// Schemas as Pydantic (v2, model_json_schema) and Zod (zod-to-json-schema,
// as openai's zodResponseFormat sends them) generate them: Optional fields
// (anyOf with null, or a type list), nested models ($defs / definitions and
// $ref), enums and literals, string formats. Each compiles, the byte
// automaton takes the answers the schema allows and refuses the others, and
// what constrained decoding cannot do (string branches, a schema that
// refers to itself, an unknown format) is refused naming the keyword.
#include "grammar_test_support.h"

#include <gtest/gtest.h>

#include <string>

namespace glmrt::grammar {
namespace {

using testing::run;
using testing::schema_of;
using testing::schema_refusal;

// class Address(BaseModel): street: str; zip: str | None = None
// class Color(str, Enum): red = "red"; green = "green"
// class Person(BaseModel):
//     name: str; age: Optional[int] = None; address: Address
//     previous: Optional[Address] = None; color: Color = Color.red
//     born: date; seen: datetime; id: UUID; email: EmailStr; ip: IPv4Address
//     kind: Literal["person"]; tags: list[str] = []
const char* const kPydanticPerson = R"({
  "$defs": {
    "Address": {"properties": {"street": {"title": "Street", "type": "string"},
                               "zip": {"anyOf": [{"type": "string"}, {"type": "null"}],
                                       "default": null, "title": "Zip"}},
                "required": ["street"], "title": "Address", "type": "object"},
    "Color": {"enum": ["red", "green"], "title": "Color", "type": "string"}},
  "properties": {
    "name": {"title": "Name", "type": "string"},
    "age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "title": "Age"},
    "address": {"$ref": "#/$defs/Address"},
    "previous": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "default": null},
    "color": {"$ref": "#/$defs/Color", "default": "red"},
    "born": {"format": "date", "title": "Born", "type": "string"},
    "seen": {"format": "date-time", "title": "Seen", "type": "string"},
    "id": {"format": "uuid", "title": "Id", "type": "string"},
    "email": {"format": "email", "title": "Email", "type": "string"},
    "ip": {"format": "ipv4", "title": "Ip", "type": "string"},
    "kind": {"const": "person", "title": "Kind", "type": "string"},
    "tags": {"default": [], "items": {"type": "string"}, "title": "Tags", "type": "array"}},
  "required": ["name", "address", "born", "seen", "id", "email", "ip", "kind"],
  "title": "Person", "type": "object"})";

const char* const kPydanticAnswer =
    R"({"name": "Ann", "age": null, "address": {"street": "Main St", "zip": "0150"},)"
    R"( "previous": null, "color": "green", "born": "1990-02-28",)"
    R"( "seen": "2024-05-31T13:05:09.5+02:00", "id": "123e4567-e89b-12d3-a456-426614174000",)"
    R"( "email": "ann@example.org", "ip": "192.168.0.255", "kind": "person", "tags": ["a"]})";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

bool schema_accepts(const char* schema, const std::string& text) {
  JsonMachine machine(schema_of(schema));
  const auto r = run(machine, text);
  return r.taken == text.size() && r.complete;
}

TEST(GeneratedSchemas, PydanticOptionalsNestedModelsEnumsAndFormats) {
  EXPECT_TRUE(schema_accepts(kPydanticPerson, kPydanticAnswer));
  EXPECT_TRUE(schema_accepts(
      kPydanticPerson,
      replaced(replaced(kPydanticAnswer, R"("age": null)", R"("age": 41)"), R"("previous": null)",
               R"("previous": {"street": "Old Rd", "zip": null})")));
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{R"("age": null)", R"("age": "41")"},
        {R"("age": null)", R"("age": 4.5)"},
        {R"("zip": "0150")", R"("zip": 150)"},
        {R"("color": "green")", R"("color": "blue")"},
        {"1990-02-28", "1990-2-28"},
        {"1990-02-28", "1990-13-01"},
        {"13:05:09.5+02:00", "13:05:09"},  // RFC 3339 wants an offset
        {"123e4567-e89b", "123e4567e89b"},
        {"ann@example.org", "ann.example.org"},
        {"192.168.0.255", "192.168.0.256"},
        {R"("kind": "person")", R"("kind": "robot")"}})
    EXPECT_FALSE(schema_accepts(kPydanticPerson, replaced(kPydanticAnswer, from, to)))
        << from << " -> " << to;
  // A required field of the nested model is still required.
  EXPECT_FALSE(
      schema_accepts(kPydanticPerson, replaced(kPydanticAnswer, R"("street": "Main St", )", "")));
  EXPECT_EQ(schema_of(kPydanticPerson)->problem(Json::parse(kPydanticAnswer)), std::nullopt);
  EXPECT_NE(
      schema_of(kPydanticPerson)->problem(Json::parse(replaced(kPydanticAnswer, "0.255", "0.256"))),
      std::nullopt);
}

// z.object({ name: z.string(), nick: z.string().nullable(), score: z.number().nullable(),
//   id: z.string().uuid(), when: z.string().datetime({ offset: true }), day: z.string().date(),
//   pet: z.union([z.string(), z.number()]), mode: z.enum(["fast", "slow"]),
//   home: address, work: address.nullable() })  // address reused: definitions + $ref
const char* const kZodSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string"}, "nick": {"type": ["string", "null"]},
    "score": {"type": ["number", "null"]}, "id": {"type": "string", "format": "uuid"},
    "when": {"type": "string", "format": "date-time"}, "day": {"type": "string", "format": "date"},
    "pet": {"anyOf": [{"type": "string"}, {"type": "number"}]},
    "mode": {"type": "string", "enum": ["fast", "slow"]},
    "home": {"$ref": "#/definitions/Address"},
    "work": {"anyOf": [{"$ref": "#/definitions/Address"}, {"type": "null"}]}},
  "required": ["name", "nick", "score", "id", "when", "day", "pet", "mode", "home", "work"],
  "additionalProperties": false,
  "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}},
                              "required": ["city"], "additionalProperties": false}},
  "$schema": "http://json-schema.org/draft-07/schema#"})";

TEST(GeneratedSchemas, ZodNullablesUnionsAndDefinitions) {
  const std::string record =
      R"({"name": "n", "nick": null, "score": -1.5, "id": "00000000-0000-4000-8000-000000000000",)"
      R"( "when": "2024-01-01T00:00:00Z", "day": "2024-01-01", "pet": 3, "mode": "slow",)"
      R"( "home": {"city": "Oslo"}, "work": null})";
  EXPECT_TRUE(schema_accepts(kZodSchema, record));
  EXPECT_TRUE(
      schema_accepts(kZodSchema, replaced(replaced(record, R"("pet": 3)", R"("pet": "cat")"),
                                          R"("work": null)", R"("work": {"city": "Bergen"})")));
  EXPECT_FALSE(schema_accepts(kZodSchema, replaced(record, R"("pet": 3)", R"("pet": true)")));
  EXPECT_FALSE(
      schema_accepts(kZodSchema, replaced(record, R"("city": "Oslo")", R"("town": "Oslo")")));
}

TEST(GeneratedSchemas, EnumAndConstOfObjectsAndArrays) {
  const char* schema = R"({"type": "object", "properties": {
    "origin": {"const": {"x": 0, "y": 0}},
    "shape": {"enum": [[1, 2], {"kind": "circle"}, "none", null]}},
    "required": ["origin", "shape"]})";
  EXPECT_TRUE(schema_accepts(schema, R"({"origin": {"x":0,"y":0}, "shape": [1,2]})"));
  EXPECT_TRUE(schema_accepts(schema, R"({"origin": {"x":0,"y":0}, "shape": {"kind":"circle"}})"));
  EXPECT_TRUE(schema_accepts(schema, R"({"origin": {"x":0,"y":0}, "shape": null})"));
  EXPECT_FALSE(schema_accepts(schema, R"({"origin": {"x":1,"y":0}, "shape": null})"));
  EXPECT_FALSE(schema_accepts(schema, R"({"origin": {"x":0,"y":0}, "shape": [2,1]})"));
  // anyOf of literals and a type: each value by its first character.
  const char* mixed = R"({"anyOf": [{"enum": [{"a": 1}, "x"]}, {"type": "array",
                         "items": {"type": "integer"}}, {"type": "null"}]})";
  EXPECT_TRUE(schema_accepts(mixed, R"({"a":1})"));
  EXPECT_TRUE(schema_accepts(mixed, R"("x")"));
  EXPECT_TRUE(schema_accepts(mixed, "[1, 2]"));
  EXPECT_TRUE(schema_accepts(mixed, "null"));
  EXPECT_FALSE(schema_accepts(mixed, R"("y")"));
  EXPECT_FALSE(schema_accepts(mixed, R"({"a":2})"));
}

TEST(GeneratedSchemas, WhatCannotBeConstrainedIsRefusedNamingIt) {
  // A recursive model (a tree): unbounded nesting.
  const SchemaError tree = schema_refusal(R"({"$defs": {"Node": {"type": "object", "properties": {
      "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
      "$ref": "#/$defs/Node"})");
  EXPECT_EQ(tree.keyword(), "$ref");
  EXPECT_NE(std::string(tree.what()).find("recursive"), std::string::npos) << tree.what();
  // Two string branches: the first character cannot tell them apart.
  const SchemaError strings = schema_refusal(
      R"({"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "maxLength": 3}]})");
  EXPECT_EQ(strings.keyword(), "anyOf");
  EXPECT_NE(std::string(strings.what()).find("strings"), std::string::npos);
  EXPECT_EQ(schema_refusal(R"({"type": "string", "format": "hostname"})").keyword(), "format");
  EXPECT_EQ(schema_refusal(R"({"$ref": "#/$defs/Missing"})").keyword(), "$ref");
  EXPECT_EQ(schema_refusal(R"({"$ref": "https://example.com/s.json"})").keyword(), "$ref");
  EXPECT_EQ(
      schema_refusal(R"({"$ref": "#/$defs/A", "type": "object", "$defs": {"A": {}}})").keyword(),
      "type");
  EXPECT_EQ(schema_refusal(R"({"anyOf": [{"type": "string"}], "minLength": 1})").keyword(),
            "minLength");
  EXPECT_EQ(schema_refusal(R"({"allOf": [{"type": "string"}]})").keyword(), "allOf");
  EXPECT_EQ(schema_refusal(R"({"type": "string", "format": "date", "maxLength": 5})").keyword(),
            "format");
}

}  // namespace
}  // namespace glmrt::grammar
