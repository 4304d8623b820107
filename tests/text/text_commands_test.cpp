// The logic behind `glmrt tokenize` and `glmrt template`.
#include <glmrt/base/error.h>
#include <glmrt/text/text_commands.h>
#include <gtest/gtest.h>

#include <string>

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

// Ids past the vocabulary decoded to nothing, silently.
TEST(TextCommands, DecodeRefusesIdsOutsideTheVocabulary) {
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("glm_tiny/tokenizer.json"));
  const std::string size = std::to_string(tokenizer.vocab_size());
  for (const char* ids : {"[1, 5000]", "[1, -1]", "[4294967296]"}) {
    try {
      decode_json_ids(tokenizer, ids);
      ADD_FAILURE() << "decoded " << ids;
    } catch (const glmrt::Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("tokenize --decode: element"), std::string::npos) << message;
      EXPECT_NE(message.find("(" + size + " tokens"), std::string::npos) << message;
    }
  }
  EXPECT_NO_THROW(
      decode_json_ids(tokenizer, "[" + std::to_string(tokenizer.vocab_size() - 1) + "]"));
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
