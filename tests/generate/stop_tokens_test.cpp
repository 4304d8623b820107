// stop_token_ids: config.json + generation_config.json + tokenizer_config.json.
#include <glmrt/base/error.h>
#include <glmrt/generate/stop_tokens.h>

#include <gtest/gtest.h>

#include <fstream>

namespace glmrt {
namespace {

const std::filesystem::path kStopTokensModel = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / ("glmrt_stop_" + name);
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

}  // namespace
}  // namespace glmrt
