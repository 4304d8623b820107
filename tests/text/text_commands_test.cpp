// The logic behind `glmrt tokenize` and `glmrt template`.
#include <glmrt/base/error.h>
#include <glmrt/text/text_commands.h>
#include <gtest/gtest.h>

#include "fixture_rows.h"

namespace glmrt::text {
namespace {

using testing::tokenizer_fixture;

TEST(TextCommands, TokenizeAndDecodeRoundTrip) {
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("qwen3/tokenizer.json"));
  const std::string text = "Hello, world!\n\xE4\xBD\xA0\xE5\xA5\xBD<think>\n";
  const std::string json = tokenize_to_json(tokenizer, text, false);
  EXPECT_EQ(json.front(), '[');
  EXPECT_EQ(decode_json_ids(tokenizer, json), text);
  EXPECT_EQ(tokenize_to_json(tokenizer, "", true), "[]");
  EXPECT_THROW(decode_json_ids(tokenizer, "[1, -2]"), glmrt::Error);
  EXPECT_THROW(decode_json_ids(tokenizer, "{}"), glmrt::Error);
}

ModelChatTemplate glm_tiny_template() {
  return ModelChatTemplate::for_model(tokenizer_fixture("glm_tiny"));
}

TEST(TextCommands, TemplateRendersTheRequestForTheModel) {
  EXPECT_EQ(render_request(glm_tiny_template(),
                           R"({"messages": [{"role": "user", "content": "hi"}],
                                         "chat_template_kwargs": {"enable_thinking": false}})",
                           "req.json"),
            "[gMASK]<sop><|system|>Reasoning Effort: Max<|user|>hi<|assistant|><think></think>");
  EXPECT_THROW(render_request(glm_tiny_template(), "[", "req.json"), glmrt::Error);
}

// Found by fuzz_chat_request: a number beyond double's range made the JSON
// library throw out_of_range, which escaped without naming the request file.
TEST(TextCommands, TemplateNamesTheRequestWhenANumberIsOutOfRange) {
  try {
    render_request(glm_tiny_template(), R"({"messages": [], "x": 1e400})", "req.json");
    ADD_FAILURE() << "no error";
  } catch (const glmrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("req.json: invalid JSON"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace glmrt::text
