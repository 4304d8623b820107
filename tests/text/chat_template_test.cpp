// GLM-5 prompts must equal the Jinja2 renders of tests/fixtures/tokenizer/chat
// and tokenize to the recorded glm_tiny ids.
#include <glmrt/base/error.h>
#include <glmrt/text/chat_template.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/tokenizer.h>
#include <gtest/gtest.h>

#include "fixture_rows.h"

namespace glmrt::text {
namespace {

using nlohmann::ordered_json;
using testing::read_json_lines;
using testing::tokenizer_fixture;

// The fixture row as the request body a server receives.
ordered_json request_of(const ordered_json& row) {
  ordered_json request;
  request["messages"] = row["messages"];
  ordered_json kwargs = ordered_json::object();
  for (const auto& [key, value] : row["options"].items()) {
    if (key == "tools") {
      request["tools"] = value;
    } else {
      kwargs[key] = value;
    }
  }
  request["chat_template_kwargs"] = kwargs;
  return request;
}

TEST(Glm5ChatTemplate, EveryGlm5RowMatchesRenderAndIds) {
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("glm_tiny/tokenizer.json"));
  int rows = 0, passed = 0;
  for (const auto& row : read_json_lines(tokenizer_fixture("chat/renders.jsonl"))) {
    if (row["template"] != "glm-5.3-flash") continue;
    ++rows;
    const std::string rendered = render_glm5_chat(request_of(row));
    const bool render_ok = rendered == row["rendered"].get<std::string>();
    EXPECT_TRUE(render_ok) << row["conversation"] << "\n--- got\n"
                           << rendered << "\n--- expected\n"
                           << row["rendered"].get<std::string>();
    const bool ids_ok = tokenizer.encode(rendered) == row["ids"].get<std::vector<TokenId>>();
    EXPECT_TRUE(ids_ok) << row["conversation"];
    passed += render_ok && ids_ok;
  }
  EXPECT_GT(rows, 0);
  std::printf("[ glm-5 chat ] %d / %d rows match\n", passed, rows);
}

TEST(Glm5ChatTemplate, ClearThinkingDropsReasoningBeforeTheLastUserTurn) {
  ordered_json request = ordered_json::parse(R"({
    "messages": [
      {"role": "user", "content": "a"},
      {"role": "assistant", "content": "b", "reasoning_content": "old"},
      {"role": "user", "content": "c"},
      {"role": "assistant", "content": "d", "reasoning_content": "new"}],
    "chat_template_kwargs": {"clear_thinking": true, "add_generation_prompt": false}})");
  EXPECT_EQ(render_glm5_chat(request),
            "[gMASK]<sop><|system|>Reasoning Effort: Max<|user|>a<|assistant|><think></think>b"
            "<|user|>c<|assistant|><think>new</think>d");
}

TEST(Glm5ChatTemplate, StringArgumentsAndDeferredToolsAndEffort) {
  ordered_json request = ordered_json::parse(R"({
    "messages": [
      {"role": "user", "content": "x"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{\"n\": 2, \"s\": \"t\"}"}}]}],
    "tools": [
      {"type": "function", "function": {"name": "f", "strict": true, "parameters": {}}},
      {"type": "function", "function": {"name": "g", "defer_loading": true}}],
    "reasoning_effort": "high",
    "chat_template_kwargs": {"enable_thinking": false}})");
  const std::string rendered = render_glm5_chat(request);
  EXPECT_NE(rendered.find("Reasoning Effort: High"), std::string::npos);
  EXPECT_NE(rendered.find("<tools>\n{\"name\": \"f\", \"parameters\": {}}\n</tools>"),
            std::string::npos);
  EXPECT_EQ(rendered.find("\"g\""), std::string::npos);
  EXPECT_NE(rendered.find("None<tool_call>f<arg_key>n</arg_key><arg_value>2</arg_value>"
                          "<arg_key>s</arg_key><arg_value>t</arg_value></tool_call>"),
            std::string::npos);
  EXPECT_TRUE(rendered.ends_with("<|assistant|><think></think>"));
}

TEST(Glm5ChatTemplate, MalformedRequestsAreClearErrors) {
  EXPECT_THROW(render_glm5_chat(ordered_json::object()), glmrt::Error);
  EXPECT_THROW(render_glm5_chat(ordered_json::parse(R"({"messages": [1]})")), glmrt::Error);
  EXPECT_THROW(
      render_glm5_chat(ordered_json::parse(
          R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "[1"}}]}]})")),
      glmrt::Error);
}

TEST(ChatForModel, PicksGlm5FromConfigAndRejectsUnknownTypes) {
  const ordered_json request =
      ordered_json::parse(R"({"messages": [{"role": "user", "content": "hi"}]})");
  EXPECT_EQ(ModelChatTemplate::for_model(tokenizer_fixture("glm_tiny")).render(request),
            "[gMASK]<sop><|system|>Reasoning Effort: Max<|user|>hi<|assistant|><think>");
  try {
    ModelChatTemplate::for_model(tokenizer_fixture("qwen3"));
    FAIL() << "expected an error";
  } catch (const glmrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace glmrt::text
