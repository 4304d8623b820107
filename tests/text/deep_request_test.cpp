// Requests, tokenizer files and id lists nested far too deeply are refused
// with an error naming the field, where they used to overflow the stack
// (`glmrt template` died with SIGSEGV at ~30 000 levels of tool-call arguments).
#include <glmrt/base/error.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/text/chat_template.h>
#include <glmrt/text/text_commands.h>
#include <glmrt/text/tokenizer.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "fixture_rows.h"

#include "temp_folder.h"

namespace glmrt::text {
namespace {

using testing::tokenizer_fixture;

constexpr int kDeep = 30000;  // what crashed

std::string nested(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += R"({"a": )";
  return text + "1" + std::string(depth, '}');
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const glmrt::Error& e) {
    return e.what();
  }
  return "no error";
}

std::string render(const std::string& request) {
  return render_request(ModelChatTemplate::for_model(tokenizer_fixture("glm_tiny")), request,
                        "request.json");
}

std::string with_arguments(const std::string& arguments) {
  return R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "",
             "tool_calls": [{"function": {"name": "f", "arguments": )" +
         arguments + "}}]}]}";
}

TEST(DeepRequest, ToolCallArgumentsObjectIsRefusedNamingTheField) {
  const std::string message = error_of([&] { render(with_arguments(nested(kDeep))); });
  EXPECT_NE(message.find("request.json: `messages[1].tool_calls[0].function.arguments"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("256"), std::string::npos) << message;
}

TEST(DeepRequest, ToolCallArgumentsAsAJsonStringAreRefusedNamingTheField) {
  const std::string as_string = nlohmann::json(nested(kDeep)).dump();
  const std::string message = error_of([&] { render(with_arguments(as_string)); });
  EXPECT_NE(message.find("messages[1].tool_calls[0].function.arguments (a JSON string)"),
            std::string::npos)
      << message;
}

TEST(DeepRequest, ToolParametersAreRefusedNamingTheField) {
  const std::string request =
      R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function",
          "function": {"name": "f", "parameters": )" +
      nested(kDeep) + "}}]}";
  const std::string message = error_of([&] { render(request); });
  EXPECT_NE(message.find("`tools[0].function.parameters"), std::string::npos) << message;
}

TEST(DeepRequest, NestingWithinTheBoundStillRenders) {
  const std::string prompt = render(with_arguments(R"({"x": )" + nested(100) + "}"));
  EXPECT_NE(prompt.find(R"(<arg_key>x</arg_key><arg_value>{"a": {"a": )"), std::string::npos);
}

TEST(DeepRequest, AValueBuiltInCodeIsHeldToTheSameBound) {
  // Not from text, so no parser saw it: the printer's own bound must hold.
  nlohmann::ordered_json deep = 1;
  for (int i = 0; i < 2000; ++i) {
    nlohmann::ordered_json outer = nlohmann::ordered_json::object();
    outer["a"] = std::move(deep);
    deep = std::move(outer);
  }
  nlohmann::ordered_json request = nlohmann::ordered_json::parse(with_arguments("{}"));
  request["messages"][1]["tool_calls"][0]["function"]["arguments"]["x"] = std::move(deep);
  const std::string message = error_of([&] { render_glm5_chat(request); });
  EXPECT_NE(message.find("more than 256 levels"), std::string::npos) << message;
}

TEST(DeepRequest, DeepTokenizerFileAndIdListAreRefused) {
  EXPECT_NE(error_of([&] {
              Tokenizer::from_json_text(nested(kDeep), "deep/tokenizer.json");
            }).find("deep/tokenizer.json: `a.a."),
            std::string::npos);
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("glm_tiny/tokenizer.json"));
  const std::string ids = std::string(kDeep, '[') + std::string(kDeep, ']');
  EXPECT_NE(error_of([&] { decode_json_ids(tokenizer, ids); }).find("tokenize --decode"),
            std::string::npos);
}

TEST(TokenizerFile, AFolderIsReportedAsOneNotAsInvalidJson) {
  const std::string folder = tokenizer_fixture("glm_tiny");
  const std::string message = error_of([&] { Tokenizer::from_file(folder); });
  EXPECT_NE(message.find("is a directory"), std::string::npos) << message;
  EXPECT_NE(message.find("glm_tiny/tokenizer.json?"), std::string::npos) << message;
  EXPECT_EQ(message.find("invalid JSON"), std::string::npos) << message;
  const auto empty_folder = test::process_temp_folder() / "glmrt_no_tokenizer";
  std::filesystem::create_directories(empty_folder);
  EXPECT_NE(error_of([&] { Tokenizer::from_file(empty_folder); }).find("is a directory"),
            std::string::npos);
}

}  // namespace
}  // namespace glmrt::text
