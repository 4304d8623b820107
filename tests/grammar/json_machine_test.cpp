// The byte automaton: what each keyword admits and refuses, byte by byte.
#include "grammar_test_support.h"

#include <gtest/gtest.h>

#include <random>

namespace glmrt::grammar {
namespace {

using testing::run;
using testing::schema_of;

// Accepted whole and complete.
::testing::AssertionResult accepts(JsonMachine& m, std::string_view text) {
  const auto r = run(m, text);
  if (r.taken == text.size() && r.complete) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "`" << text << "`: took " << r.taken << " of "
                                       << text.size() << " bytes, complete " << r.complete;
}

// Refused at byte `at` (0-based).
::testing::AssertionResult refuses_at(JsonMachine& m, std::string_view text, size_t at) {
  const auto r = run(m, text);
  if (r.taken == at && at < text.size()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "`" << text << "`: took " << r.taken << " bytes, expected a refusal at byte " << at;
}

TEST(JsonMachine, AnyObjectTakesJsonAndNothingAround) {
  JsonMachine m(std::make_shared<const JsonSchema>(JsonSchema::any_object()));
  EXPECT_TRUE(accepts(m, "{}"));
  EXPECT_TRUE(accepts(m, R"({"a":1})"));
  EXPECT_TRUE(accepts(m, R"({"a": [1, 2.5, -3e10, "x\n\u00e9", true, false, null, {"b": {}}]})"));
  EXPECT_TRUE(run(m, "{}").finished);
  EXPECT_TRUE(refuses_at(m, "[]", 0));   // the root is an object
  EXPECT_TRUE(refuses_at(m, " {}", 0));  // the value starts at once
  EXPECT_TRUE(refuses_at(m, "{} ", 2));  // and nothing follows it
  EXPECT_TRUE(refuses_at(m, R"({"a":})", 5));
  EXPECT_TRUE(refuses_at(m, "{,}", 1));
  EXPECT_TRUE(refuses_at(m, R"({"a":1,})", 7));
  EXPECT_TRUE(refuses_at(m, R"({"a":tru})", 8));
  EXPECT_TRUE(refuses_at(m, R"({"a":01})", 6));  // no leading zeros
  EXPECT_FALSE(run(m, R"({"a":1)").complete);
}

TEST(JsonMachine, WhitespaceRunsAreBounded) {
  JsonMachine m(std::make_shared<const JsonSchema>(JsonSchema::any_object()));
  EXPECT_TRUE(accepts(m, "{\"a\":\n \t 1 }"));
  EXPECT_TRUE(accepts(m, "{    \"a\"    :    1    }"));
  EXPECT_TRUE(refuses_at(m, "{\"a\":     1}", 9));  // a fifth space
  EXPECT_TRUE(refuses_at(m, "{\"a\": [1,     2]}", 13));
}

TEST(JsonMachine, NestingIsBounded) {
  JsonMachine m(std::make_shared<const JsonSchema>(JsonSchema::any_object()));
  const std::string deepest = "{\"a\":" + std::string(kMaxNesting - 1, '[');
  EXPECT_EQ(run(m, deepest).taken, deepest.size());
  EXPECT_TRUE(refuses_at(m, deepest + "[", deepest.size()));
  EXPECT_EQ(run(m, deepest + "1").taken, deepest.size() + 1);  // a scalar still fits
}

TEST(JsonMachine, StringLengthsCountCharacters) {
  JsonMachine m(schema_of(R"({"type": "string", "minLength": 2, "maxLength": 3})"));
  EXPECT_TRUE(accepts(m, R"("abc")"));
  EXPECT_TRUE(accepts(m, R"("ab")"));
  EXPECT_TRUE(refuses_at(m, R"("abcd")", 4));           // no fourth character
  EXPECT_TRUE(refuses_at(m, R"("a")", 2));              // no closing before two
  EXPECT_TRUE(accepts(m, "\"\xC3\xA9\xE2\x82\xAC\""));  // é€: two characters
  EXPECT_TRUE(accepts(m, R"("\n\u00e9")"));             // an escape is one
  EXPECT_TRUE(refuses_at(m, R"("\n\u00e9x\")", 10));
}

TEST(JsonMachine, StringsAreValidJsonText) {
  JsonMachine m(schema_of(R"({"type": "string"})"));
  EXPECT_TRUE(refuses_at(m, "\"a\x01", 2));         // raw control character
  EXPECT_TRUE(refuses_at(m, "\"\xFF", 1));          // never UTF-8
  EXPECT_TRUE(refuses_at(m, "\"\xC0\x80", 1));      // overlong
  EXPECT_TRUE(refuses_at(m, "\"\xE0\x80", 2));      // overlong, three bytes
  EXPECT_TRUE(refuses_at(m, "\"\xED\xA0\x80", 2));  // a surrogate in UTF-8
  EXPECT_TRUE(refuses_at(m, "\"\xC3x", 2));         // a character cut short
  EXPECT_TRUE(refuses_at(m, R"("\ud800")", 4));     // a lone surrogate escape
  EXPECT_TRUE(refuses_at(m, R"("\x")", 2));
  EXPECT_TRUE(accepts(m, "\"\xF0\x9F\x98\x80\""));  // U+1F600
  EXPECT_TRUE(accepts(m, R"("\"\\\/\b\f\n\r\t\u0041")"));
}

TEST(JsonMachine, IntegerBoundsHoldWhileDigitsArrive) {
  JsonMachine m(schema_of(R"({"type": "integer", "minimum": 0, "maximum": 100})"));
  EXPECT_TRUE(accepts(m, "100"));
  EXPECT_TRUE(accepts(m, "0"));
  EXPECT_TRUE(accepts(m, "99"));
  EXPECT_TRUE(refuses_at(m, "101", 2));   // 10 may still become 100, not 101
  EXPECT_TRUE(refuses_at(m, "1000", 3));  // no third digit past 100
  EXPECT_TRUE(refuses_at(m, "-1", 0));    // not even "-0": a negative is below 0
  EXPECT_TRUE(refuses_at(m, "1.5", 1));   // an integer has no point
  EXPECT_TRUE(refuses_at(m, "1e2", 1));
  EXPECT_TRUE(refuses_at(m, "05", 1));
  EXPECT_TRUE(run(m, "10").complete);
  EXPECT_FALSE(run(m, "10").finished);  // 100 is still possible
  EXPECT_TRUE(run(m, "100").finished);
}

TEST(JsonMachine, NegativeAndExclusiveIntegerBounds) {
  JsonMachine m(schema_of(R"({"type": "integer", "minimum": -20, "exclusiveMaximum": 10})"));
  EXPECT_TRUE(accepts(m, "-20"));
  EXPECT_TRUE(accepts(m, "9"));
  EXPECT_TRUE(refuses_at(m, "-21", 2));
  EXPECT_TRUE(accepts(m, "-3"));
  EXPECT_TRUE(refuses_at(m, "10", 1));
  JsonMachine high(schema_of(R"({"type": "integer", "minimum": 50})"));
  EXPECT_TRUE(refuses_at(high, "-", 0));
  EXPECT_TRUE(accepts(high, "5000"));
  EXPECT_FALSE(run(high, "5").complete);  // below 50: must grow
  EXPECT_TRUE(refuses_at(high, "0", 0));  // 0 cannot grow
}

TEST(JsonMachine, NumberBoundsCoverFractions) {
  JsonMachine m(schema_of(R"({"type": "number", "minimum": -1.5, "maximum": 2.25})"));
  EXPECT_TRUE(accepts(m, "2.25"));
  EXPECT_TRUE(accepts(m, "-1.5"));
  EXPECT_TRUE(accepts(m, "0.125"));
  EXPECT_TRUE(accepts(m, "-0.5"));
  EXPECT_TRUE(refuses_at(m, "2.26", 3));
  EXPECT_TRUE(refuses_at(m, "2.3", 2));
  EXPECT_TRUE(refuses_at(m, "-1.6", 3));
  EXPECT_TRUE(refuses_at(m, "3", 0));
  EXPECT_TRUE(refuses_at(m, "1e5", 1));            // bounded numbers take no exponent
  EXPECT_TRUE(refuses_at(m, "0.1234567891", 11));  // kFractionDigits after the point
}

TEST(JsonMachine, UnboundedNumbersTakeExponentsWithinDigitCaps) {
  JsonMachine m(schema_of(R"({"type": "number"})"));
  EXPECT_TRUE(accepts(m, "1e5"));
  EXPECT_TRUE(accepts(m, "-0.5E+3"));
  EXPECT_TRUE(accepts(m, "123456789012345"));
  EXPECT_TRUE(refuses_at(m, "1234567890123456", 15));
  EXPECT_TRUE(accepts(m, "-999999999999999.999999999e+99"));  // a finite double
  EXPECT_TRUE(refuses_at(m, "1e1234", 4));                    // would overflow it
  EXPECT_FALSE(run(m, "1.").complete);
  EXPECT_FALSE(run(m, "1e").complete);
}

TEST(JsonMachine, EnumConstAndLiterals) {
  JsonMachine colors(schema_of(R"({"enum": ["red", "green", 12, 1, null]})"));
  EXPECT_TRUE(accepts(colors, R"("red")"));
  EXPECT_TRUE(accepts(colors, R"("green")"));
  EXPECT_TRUE(accepts(colors, "1"));
  EXPECT_TRUE(accepts(colors, "12"));
  EXPECT_TRUE(accepts(colors, "null"));
  EXPECT_TRUE(refuses_at(colors, R"("blue")", 1));
  EXPECT_TRUE(refuses_at(colors, "13", 1));
  EXPECT_TRUE(run(colors, R"("red")").finished);
  EXPECT_FALSE(run(colors, "1").finished);  // 12 is still possible
  JsonMachine fixed(schema_of(R"({"const": {"a": [1, true]}})"));
  EXPECT_TRUE(accepts(fixed, R"({"a":[1,true]})"));
  EXPECT_TRUE(refuses_at(fixed, R"({"a": )", 5));  // the text as written, compact
  JsonMachine flags(schema_of(R"({"type": ["boolean", "null"]})"));
  EXPECT_TRUE(accepts(flags, "true"));
  EXPECT_TRUE(accepts(flags, "false"));
  EXPECT_TRUE(accepts(flags, "null"));
  EXPECT_TRUE(refuses_at(flags, "nul1", 3));
  EXPECT_TRUE(refuses_at(flags, "1", 0));
}

TEST(JsonMachine, TypeListsDispatchOnTheFirstByte) {
  JsonMachine m(schema_of(R"({"type": ["string", "null", "integer"], "maxLength": 1})"));
  EXPECT_TRUE(accepts(m, R"("x")"));
  EXPECT_TRUE(accepts(m, "null"));
  EXPECT_TRUE(accepts(m, "42"));
  EXPECT_TRUE(refuses_at(m, "4.2", 1));
  EXPECT_TRUE(refuses_at(m, R"("xy")", 2));
  EXPECT_TRUE(refuses_at(m, "[", 0));
}

constexpr std::string_view kPerson = R"({
  "type": "object",
  "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                 "nick": {"type": "string"}},
  "required": ["name"]})";

TEST(JsonMachine, PropertiesRequiredAndNoOtherKeys) {
  JsonMachine m(schema_of(kPerson));
  EXPECT_TRUE(accepts(m, R"({"name":"a"})"));
  EXPECT_TRUE(accepts(m, R"({"age":3,"name":"a"})"));            // any order
  EXPECT_TRUE(refuses_at(m, R"({"age":3})", 8));                 // name is required
  EXPECT_TRUE(refuses_at(m, R"({"name":"a","name":"b"})", 14));  // once each
  EXPECT_TRUE(refuses_at(m, R"({"other":1})", 2));               // no other keys
  EXPECT_TRUE(refuses_at(m, R"({"nam":1})", 5));
  EXPECT_TRUE(refuses_at(m, R"({"age":"3"})", 7));  // the property's own schema
  EXPECT_TRUE(refuses_at(m, R"({"name":"a","age":1,"nick":"b",)", 30));  // no key is left
  EXPECT_TRUE(refuses_at(m, R"({})", 1));
}

TEST(JsonMachine, AdditionalPropertiesWhenAllowed) {
  JsonMachine any(schema_of(R"({"type": "object", "properties": {"name": {"type": "string"}},
                                 "additionalProperties": true})"));
  EXPECT_TRUE(accepts(any, R"({"name":"a","x":[1,{"y":null}]})"));
  EXPECT_TRUE(accepts(any, R"({"nam":1})"));  // left the declared name: another key
  EXPECT_TRUE(accepts(any, R"({"names":1})"));
  EXPECT_TRUE(refuses_at(any, R"({"name":"a","name":1})", 17));  // still only once
  EXPECT_TRUE(refuses_at(any, R"({"name":1})", 8));              // the declared schema
  JsonMachine typed(
      schema_of(R"({"type": "object", "additionalProperties": {"type": "integer"}})"));
  EXPECT_TRUE(accepts(typed, R"({"a":1,"b":2})"));
  EXPECT_TRUE(refuses_at(typed, R"({"a":"x"})", 5));
  JsonMachine closed(schema_of(R"({"type": "object", "additionalProperties": false})"));
  EXPECT_TRUE(accepts(closed, "{}"));
  EXPECT_TRUE(refuses_at(closed, R"({")", 1));
}

TEST(JsonMachine, ArrayItemsAndCounts) {
  JsonMachine m(schema_of(R"({"type": "array", "items": {"type": "integer"},
                               "minItems": 1, "maxItems": 2})"));
  EXPECT_TRUE(accepts(m, "[1]"));
  EXPECT_TRUE(accepts(m, "[1, 2]"));
  EXPECT_TRUE(refuses_at(m, "[]", 1));
  EXPECT_TRUE(refuses_at(m, "[1,2,3]", 4));
  EXPECT_TRUE(refuses_at(m, "[1,\"a\"]", 3));
  EXPECT_TRUE(refuses_at(m, "[1,]", 3));
  JsonMachine empty(schema_of(R"({"type": "array", "maxItems": 0})"));
  EXPECT_TRUE(accepts(empty, "[]"));
  EXPECT_TRUE(refuses_at(empty, "[1", 1));
}

// A random walk over allowed bytes never meets a dead end, and what it
// completes parses and satisfies the schema.
TEST(JsonMachine, RandomWalksFinishValidAndNeverStick) {
  const auto schema = schema_of(R"({
    "type": "object",
    "properties": {
      "title": {"type": "string", "maxLength": 6},
      "score": {"type": "number", "minimum": -2.5, "maximum": 7},
      "count": {"type": "integer", "minimum": 3, "maximum": 1200},
      "tags": {"type": "array", "items": {"enum": ["a", "bc", 5]}, "maxItems": 3},
      "ok": {"type": ["boolean", "null"]},
      "inner": {"type": "object", "properties": {"x": {"type": "integer", "maximum": -7}},
                "required": ["x"]}
    },
    "required": ["title", "score", "count", "tags", "ok", "inner"]})");
  // Printable ASCII and one multi-byte character, so walks stay short.
  const int finished = testing::random_walks(schema, 7, 300, 400, [](int b) {
    return (b >= 0x20 && b <= 0x7E) || b == '\n' || b == 0xC3 || b == 0xA9;
  });
  EXPECT_GT(finished, 100);
}

}  // namespace
}  // namespace glmrt::grammar
