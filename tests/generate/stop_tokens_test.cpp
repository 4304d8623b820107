// stop_token_ids: config.json + generation_config.json + tokenizer_config.json.
#include <glmrt/base/error.h>
#include <glmrt/generate/stop_tokens.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "temp_folder.h"

namespace glmrt {
namespace {

const std::filesystem::path kStopTokensModel = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";

std::filesystem::path scratch(const std::string& name) {
  const auto dir = test::process_temp_folder() / ("glmrt_stop_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(StopTokens, TinyGlmStopsAtEndOfTextUserAndObservation) {
  const ModelConfig config = load_model_config(kStopTokensModel);
  EXPECT_EQ(stop_token_ids(config, kStopTokensModel), (std::vector<int32_t>{1010, 1017, 1019}));
}

TEST(StopTokens, TheThreeSourcesAreMergedSortedAndDeduplicated) {
  const auto dir = scratch("merged");
  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": [7, 3]})";
  std::ofstream(dir / "tokenizer_config.json") << R"({
    "eos_token": {"content": "<end>"},
    "added_tokens_decoder": {"5": {"content": "<pad>"}, "11": {"content": "<end>"}}})";
  ModelConfig config;
  config.vocab_size = 16;
  config.eos_token_ids = {7, 2};
  EXPECT_EQ(stop_token_ids(config, dir), (std::vector<int32_t>{2, 3, 7, 11}));
}

TEST(StopTokens, MissingFilesAreSkipped) {
  ModelConfig config;
  config.eos_token_ids = {4};
  EXPECT_EQ(stop_token_ids(config, scratch("empty")), (std::vector<int32_t>{4}));
}

TEST(StopTokens, ABadIdIsAnErrorNamingTheFile) {
  const auto dir = scratch("bad");
  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": "two"})";
  try {
    stop_token_ids(ModelConfig{}, dir);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("generation_config.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("eos_token_id"), std::string::npos) << e.what();
  }
}

// generation_config.json's ids are held to config.json's vocabulary: eos 5000
// with 1024 tokens was a stop token the model can never produce.
TEST(StopTokens, GenerationConfigIdsOutsideTheVocabularyAreRefused) {
  ModelConfig config;
  config.vocab_size = 1024;
  for (const auto& [body, key, id] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {R"({"eos_token_id": 5000})", "eos_token_id", "5000"},
           {R"({"eos_token_id": [1010, 1024]})", "eos_token_id", "1024"},
           {R"({"eos_token_id": -1})", "eos_token_id", "-1"},
           {R"({"bos_token_id": 99999, "eos_token_id": 3})", "bos_token_id", "99999"},
           {R"({"pad_token_id": 2048})", "pad_token_id", "2048"}}) {
    const auto dir = scratch("vocab");
    std::ofstream(dir / "generation_config.json") << body;
    try {
      stop_token_ids(config, dir);
      ADD_FAILURE() << "accepted " << body;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("generation_config.json"), std::string::npos) << message;
      EXPECT_NE(message.find("`" + key + "`"), std::string::npos) << message;
      EXPECT_NE(message.find(id), std::string::npos) << message;
      EXPECT_NE(message.find("vocab_size 1024"), std::string::npos) << message;
    }
  }
  const auto dir = scratch("vocab_ok");
  std::ofstream(dir / "generation_config.json")
      << R"({"bos_token_id": 0, "pad_token_id": 1023, "eos_token_id": [1023]})";
  EXPECT_EQ(stop_token_ids(config, dir), (std::vector<int32_t>{1023}));
}

}  // namespace
}  // namespace glmrt
