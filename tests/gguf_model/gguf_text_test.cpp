// The text side of a GGUF model (ModelText): glm_dsa-Q4_K_M.gguf carries the
// glm_tiny tokenizer, so its prompts, chat prompts and stop ids must be those
// of the folder form (tests/fixtures/glm_tiny: tokenizer.json,
// tokenizer_config.json, generation_config.json, the built-in GLM-5
// template); run, chat and serve take them from the file.
#include "../serve/server_process.h"

#include <glmrt/generate/conversation.h>
#include <glmrt/generate/model_text.h>
#include <glmrt/model_files/model_config.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <httplib.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint_generator.h"
#include "shell_command.h"

namespace glmrt {
namespace gguf_text_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kGguf = fs::path(GLMRT_FIXTURES) / "gguf" / "glm_dsa-Q4_K_M.gguf";
const fs::path kFolder = fs::path(GLMRT_FIXTURES) / "glm_tiny";
const std::string kProfile = std::string(GLMRT_SOURCE_DIR) + "/configs/reference.yaml";

std::vector<int32_t> chat_prompt(const ModelText& model, const std::string& user) {
  Conversation conversation{ChatOptions{}};
  conversation.add_user(user);
  const auto ids =
      conversation.encode(model.chat_template(text::ChatTemplateChoice::model), model.tokenizer());
  return {ids.begin(), ids.end()};
}

TEST(GgufText, PromptsChatPromptsAndStopsAreTheFolderForms) {
  const ModelText gguf = ModelText::open(kGguf);
  const ModelText folder = ModelText::open(kFolder);
  ASSERT_TRUE(gguf.is_gguf());
  ASSERT_FALSE(folder.is_gguf());
  const text::Tokenizer from_gguf = gguf.tokenizer();
  const text::Tokenizer from_folder = folder.tokenizer();
  for (const char* prompt : {"hello", "Hello, world! 12345 ", "<|user|>[gMASK] héllo\n\tok"})
    EXPECT_EQ(from_gguf.encode(prompt, true), from_folder.encode(prompt, true)) << prompt;
  const std::vector<int32_t> chat = chat_prompt(gguf, "hello");
  EXPECT_EQ(chat, chat_prompt(folder, "hello"));
  EXPECT_EQ(from_gguf.decode(std::vector<text::TokenId>(chat.begin(), chat.begin() + 2)),
            "[gMASK]<sop>");
  // <|endoftext|>, <|user|>, <|observation|> as the folder's three files list them.
  const std::vector<int32_t> stops = gguf.stop_ids(load_model_config(kGguf));
  EXPECT_EQ(stops, folder.stop_ids(load_model_config(kFolder)));
  EXPECT_EQ(stops, (std::vector<int32_t>{1010, 1017, 1019}));
}

std::pair<int, std::string> run_glmrt(const std::string& args) {
  return test::run_shell(
      fmt::format("{}/glmrt run --profile {} {} 2>&1", GLMRT_BUILD_DIR, kProfile, args));
}

TEST(GgufText, RunTakesThePromptTextFromTheFile) {
  const std::vector<text::TokenId> hello =
      ModelText::open(kFolder).tokenizer().encode("hello", true);
  const std::string ids = fmt::format("{}", fmt::join(hello, ","));
  const auto [text_status, text_out] =
      run_glmrt(fmt::format("--model {} --prompt hello -n 8 --ignore-eos", kGguf.string()));
  ASSERT_EQ(text_status, 0) << text_out;
  EXPECT_THAT(text_out, HasSubstr("(8 tokens)"));
  // The same prompt as ids: the continuation the text run printed.
  const auto [ids_status, ids_out] = test::run_shell(fmt::format(
      "{}/glmrt run --profile {} --model {} --prompt-ids {} -n 8 --ignore-eos 2>/dev/null",
      GLMRT_BUILD_DIR, kProfile, kGguf.string(), ids));
  ASSERT_EQ(ids_status, 0) << ids_out;
  std::vector<text::TokenId> generated;
  for (size_t at = 0; at < ids_out.size();) {
    size_t used = 0;
    generated.push_back(static_cast<text::TokenId>(std::stoul(ids_out.substr(at), &used)));
    at += used + 1;
  }
  ASSERT_EQ(generated.size(), 8u) << ids_out;
  const std::string answer = ModelText::open(kFolder).tokenizer().decode(generated, true);
  EXPECT_THAT(text_out, HasSubstr(answer + "\n")) << answer;
}

TEST(GgufText, ChatOnStdinAnswersAsRunChatDoes) {
  const auto [run_status, run_out] = test::run_shell(
      fmt::format("{}/glmrt run --profile {} --model {} --chat --prompt hello -n 6 2>/dev/null",
                  GLMRT_BUILD_DIR, kProfile, kGguf.string()));
  ASSERT_EQ(run_status, 0) << run_out;
  const auto [chat_status, chat_out] = test::run_shell(
      fmt::format("printf 'hello\\n' | {}/glmrt chat --profile {} --model {} -n 6 2>/dev/null",
                  GLMRT_BUILD_DIR, kProfile, kGguf.string()));
  EXPECT_EQ(chat_status, 0) << chat_out;
  EXPECT_THAT(chat_out, HasSubstr(run_out.substr(0, run_out.find_last_not_of('\n') + 1)));
}

TEST(GgufText, ServeAnswersAChatCompletionFromTheFile) {
  test::ServerProcess server({"--profile", kProfile, "--model", kGguf.string()});
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(60);
  const nlohmann::json request = {{"messages", {{{"role", "user"}, {"content", "hello"}}}},
                                  {"max_tokens", 4},
                                  {"temperature", 0}};
  const auto response = client.Post("/v1/chat/completions", request.dump(), "application/json");
  ASSERT_TRUE(response);
  ASSERT_EQ(response->status, 200) << response->body;
  const nlohmann::json answer = nlohmann::json::parse(response->body);
  EXPECT_EQ(answer["choices"][0]["message"]["role"], "assistant") << answer.dump();
  // The prompt the folder form renders for that request.
  const ModelText folder = ModelText::open(kFolder);
  const std::string prompt =
      folder.chat_template(text::ChatTemplateChoice::model).render(nlohmann::ordered_json(request));
  EXPECT_EQ(answer["usage"]["prompt_tokens"], folder.tokenizer().encode(prompt).size());
  EXPECT_EQ(server.stop(), 0) << server.log();
}

TEST(GgufText, PromptIdsRunOnAFileWhoseTokenizerIsRefused) {
  // llama.cpp's placeholder vocabulary in this fixture has merges of unknown
  // tokens, which the tokenizer builder refuses: ids need no tokenizer.
  const fs::path file = fs::path(GLMRT_FIXTURES) / "gguf" / "deepseek_v3-IQ2_XXS.gguf";
  const auto [status, out] = test::run_shell(
      fmt::format("{}/glmrt run --profile {} --model {} --prompt-ids 5,6,7 -n 4 --ignore-eos "
                  "2>/dev/null",
                  GLMRT_BUILD_DIR, kProfile, file.string()));
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), ','), 3) << out;
  const auto [text_status, text_out] =
      run_glmrt(fmt::format("--model {} --prompt hello -n 4", file.string()));
  EXPECT_NE(text_status, 0);
  EXPECT_THAT(text_out, HasSubstr(file.string()));
  EXPECT_THAT(text_out, HasSubstr("tokenizer.ggml.merges"));
}

TEST(GgufText, ServeRefusesAnUnknownPreTokenizerBeforeTheModelLoads) {
  // The fixture with `tokenizer.ggml.pre` "glm4" spelled "xlm4" (same length),
  // served under a budget no model fits: the engine would refuse the budget
  // as it opens, so the tokenizer's refusal must come before it.
  test::ScratchDir dir("glmrt-gguf-pre");
  std::ifstream in(kGguf, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "tokenizer.ggml.pre";
  const size_t value = bytes.find(key) + key.size() + 4 + 8;  // type u32, length u64
  ASSERT_EQ(bytes.substr(value, 4), "glm4");
  bytes.replace(value, 4, "xlm4");
  const fs::path file = dir.path() / "bad-pre.gguf";
  std::ofstream(file, std::ios::binary) << bytes;
  const fs::path profile = dir.path() / "tiny-budget.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered, draft: none}\n"
                            "memory: {budget: 1MiB}\n";
  const auto [status, out] =
      test::run_shell(fmt::format("{}/glmrt serve --profile {} --model {} --port 0 2>&1",
                                  GLMRT_BUILD_DIR, profile.string(), file.string()));
  EXPECT_NE(status, 0);
  EXPECT_THAT(out, HasSubstr(file.string() + ": tokenizer.ggml.pre 'xlm4' is not a pre-tokenizer"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("budget"))) << out;
}

}  // namespace gguf_text_test
}  // namespace glmrt
