// The bound on JSON nesting (glmrt/base/json_nesting.h): where it triggers,
// what the error names, and that brackets inside strings do not count.
#include <glmrt/base/error.h>
#include <glmrt/base/json_nesting.h>
#include <gtest/gtest.h>

#include <string>

namespace glmrt {
namespace {

std::string nested_objects(int depth, const std::string& key = "a") {
  std::string text;
  for (int i = 0; i < depth; ++i) text += "{\"" + key + "\": ";
  text += "1";
  text += std::string(depth, '}');
  return text;
}

TEST(JsonNesting, DepthAtTheLimitPassesOneMoreIsFound) {
  EXPECT_FALSE(find_excess_json_nesting(nested_objects(kMaxJsonNesting)));
  const auto excess = find_excess_json_nesting(nested_objects(kMaxJsonNesting + 1));
  ASSERT_TRUE(excess);
  // The opening brace of level 257 sits after 256 copies of `{"a": `.
  EXPECT_EQ(excess->offset, static_cast<size_t>(kMaxJsonNesting) * 6);
  EXPECT_EQ(excess->path, "a.a.a.a.a.a.a.a...");
}

TEST(JsonNesting, PathNamesKeysAndIndicesOfTheOutermostLevels) {
  const std::string text = R"({"messages": [{"role": "user"}, {"tool_calls": [{"function": )"
                           R"({"name": "f", "arguments": )" +
                           nested_objects(40, "x") + "}}]}]}";
  const auto excess = find_excess_json_nesting(text, 10);
  ASSERT_TRUE(excess);
  // Eight levels are shown: the rest of the path is elided.
  EXPECT_EQ(excess->path, "messages[1].tool_calls[0].function.arguments.x.x...");
}

TEST(JsonNesting, BracketsInsideStringsAndEscapedQuotesDoNotCount) {
  const std::string text = R"({"k\"{[": "[[[[[[[[[[{{{{{{{{\"[[[[", "list": [[1], [2]]})";
  // Three levels: the object, "list" and its inner arrays.
  EXPECT_FALSE(find_excess_json_nesting(text, 3));
  EXPECT_TRUE(find_excess_json_nesting(text, 2));
}

TEST(JsonNesting, DeepArraysAreFoundToo) {
  const std::string text = std::string(30000, '[') + std::string(30000, ']');
  const auto excess = find_excess_json_nesting(text);
  ASSERT_TRUE(excess);
  EXPECT_EQ(excess->offset, static_cast<size_t>(kMaxJsonNesting));
  EXPECT_EQ(excess->path, "[0][0][0][0][0][0][0][0]...");
}

TEST(JsonNesting, TheErrorNamesTheSourceThePathAndTheLimit) {
  try {
    require_json_nesting_within(nested_objects(300), "request.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("request.json: `a.a.a"), std::string::npos) << message;
    EXPECT_NE(message.find("more than 256 levels"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(require_json_nesting_within("[1, {\"a\": []}]", "x.json"));
}

}  // namespace
}  // namespace glmrt
