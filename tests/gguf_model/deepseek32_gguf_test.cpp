// No llama.cpp-made deepseek32 GGUF ships with the tests: one is written from
// tests/fixtures/deepseek_v32_tiny with llama.cpp's keys and tensor layout,
// and must validate against that checkpoint's float64 reference exactly.
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checkpoint_generator.h"
#include "gguf_from_checkpoint.h"
#include "shell_command.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
const fs::path kCheckpoint = fs::path(GLMRT_FIXTURES) / "deepseek_v32_tiny";

class Deepseek32Gguf : public ::testing::Test {
 protected:
  void SetUp() override { test::write_gguf_from_checkpoint(kCheckpoint, file_, "deepseek32"); }
  test::ScratchDir dir_{"glmrt-gguf-v32"};
  fs::path file_ = dir_.path() / "deepseek_v32_tiny-BF16.gguf";
};

TEST_F(Deepseek32Gguf, ConfigMatchesTheCheckpoints) {
  const ModelConfig from_gguf = load_model_config(file_, TensorDirectory::open(file_));
  const ModelConfig from_hf = load_model_config(kCheckpoint);
  EXPECT_EQ(from_gguf.model_type, "deepseek_v32");
  EXPECT_EQ(from_gguf.vocab_size, from_hf.vocab_size);
  EXPECT_EQ(from_gguf.num_hidden_layers, from_hf.num_hidden_layers);
  EXPECT_EQ(from_gguf.q_lora_rank, from_hf.q_lora_rank);
  EXPECT_EQ(from_gguf.qk_nope_head_dim, from_hf.qk_nope_head_dim);
  EXPECT_EQ(from_gguf.qk_rope_head_dim, from_hf.qk_rope_head_dim);
  EXPECT_EQ(from_gguf.v_head_dim, from_hf.v_head_dim);
  EXPECT_EQ(from_gguf.n_group, from_hf.n_group);
  EXPECT_EQ(from_gguf.topk_group, from_hf.topk_group);
  EXPECT_EQ(from_gguf.index_topk, from_hf.index_topk);
  EXPECT_EQ(from_gguf.index_head_dim, from_hf.index_head_dim);
  EXPECT_EQ(from_gguf.index_n_heads, from_hf.index_n_heads);
  EXPECT_EQ(from_gguf.rms_norm_eps, from_hf.rms_norm_eps);  // float32 key, shortest decimal
  EXPECT_EQ(from_gguf.rope.yarn, from_hf.rope.yarn);
  EXPECT_EQ(from_gguf.rope.scaling.factor, from_hf.rope.scaling.factor);
  EXPECT_DOUBLE_EQ(from_gguf.rope.attention_factor, from_hf.rope.attention_factor);
  EXPECT_DOUBLE_EQ(from_gguf.rope.softmax_multiplier, from_hf.rope.softmax_multiplier);
  EXPECT_EQ(from_gguf.indexer_rope_interleave, from_hf.indexer_rope_interleave);
  EXPECT_EQ(from_gguf.mlp_layer_types, from_hf.mlp_layer_types);
  EXPECT_EQ(from_gguf.eos_token_ids, from_hf.eos_token_ids);
}

TEST_F(Deepseek32Gguf, ValidatesExactlyAgainstTheCheckpointsReference) {
  const auto [status, out] = test::run_shell(fmt::format(
      "{}/glmrt validate --profile {}/configs/reference.yaml --model {} --ref {} --json "
      "2>/dev/null",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, file_.string(), (kCheckpoint / "ref.json").string()));
  EXPECT_EQ(status, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["pass"], true) << out;
}

TEST_F(Deepseek32Gguf, RunsFromPromptIdsWithoutATokenizer) {
  // The GGUF has no tokenizer: ids in, ids out, the checkpoint's very tokens.
  const auto run = [](const fs::path& model) {
    return test::run_shell(fmt::format(
        "{}/glmrt run --profile {}/configs/reference.yaml --model {} --prompt-ids 5,6,7 -n 6 "
        "2>/dev/null",
        GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, model.string()));
  };
  const auto [status, out] = run(file_);
  EXPECT_EQ(status, 0) << out;
  const auto [checkpoint_status, checkpoint_out] = run(kCheckpoint);
  ASSERT_EQ(checkpoint_status, 0);
  EXPECT_EQ(out, checkpoint_out);
  EXPECT_EQ(std::count(out.begin(), out.end(), ','), 5) << out;
}

TEST_F(Deepseek32Gguf, TextWithoutATokenizerIsRefusedNamingTheFileAndKey) {
  // Refused before the model loads, for each command that reads text.
  const fs::path text = dir_.path() / "text.txt";
  test::run_shell(fmt::format("printf 'some text to score' > {}", text.string()));
  const std::vector<std::string> commands = {"run --prompt hello", "chat </dev/null",
                                             "score --perplexity " + text.string()};
  for (const std::string& command : commands) {
    const auto [status, out] = test::run_shell(
        fmt::format("{}/glmrt {} --profile {}/configs/reference.yaml --model {} 2>&1",
                    GLMRT_BUILD_DIR, command, GLMRT_SOURCE_DIR, file_.string()));
    EXPECT_NE(status, 0) << command;
    EXPECT_NE(
        out.find(file_.string() + " has no tokenizer (no metadata key 'tokenizer.ggml.model')"),
        std::string::npos)
        << command << ": " << out;
  }
}

// llama.cpp writes tokenizer.ggml.model "none" (with ARCH.vocab_size) for a
// file without a vocabulary: ids run, text is refused saying so.
TEST_F(Deepseek32Gguf, ATokenizerModelOfNoneIsNoTokenizer) {
  const fs::path none = dir_.path() / "no-vocab.gguf";
  test::GgufEdits edits;
  edits.extra = [](gguf::Writer& w) { w.set("tokenizer.ggml.model", gguf::Value::str("none")); };
  test::write_gguf_from_checkpoint(kCheckpoint, none, "deepseek32", edits);
  const auto run = [&](const std::string& input) {
    return test::run_shell(
        fmt::format("{}/glmrt run --profile {}/configs/reference.yaml --model {} {} -n 2 2>&1",
                    GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, none.string(), input));
  };
  const auto [ids_status, ids_out] = run("--prompt-ids 5,6,7");
  EXPECT_EQ(ids_status, 0) << ids_out;
  const auto [text_status, text_out] = run("--prompt hello");
  EXPECT_NE(text_status, 0) << text_out;
  EXPECT_NE(text_out.find(none.string() + " has no tokenizer (its metadata key "
                                          "'tokenizer.ggml.model' says none)"),
            std::string::npos)
      << text_out;
}

TEST_F(Deepseek32Gguf, AnEndOfGenerationIdPastTheVocabularyIsRefused) {
  const fs::path bad = dir_.path() / "fim-past-vocab.gguf";
  test::GgufEdits edits;
  edits.extra = [](gguf::Writer& w) {
    w.set("tokenizer.ggml.fim_pad_token_id", gguf::Value::u32(1u << 20));
  };
  test::write_gguf_from_checkpoint(kCheckpoint, bad, "deepseek32", edits);
  const auto [status, out] = test::run_shell(fmt::format(
      "{}/glmrt run --profile {}/configs/reference.yaml --model {} --prompt-ids 5,6,7 -n 2 2>&1",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, bad.string()));
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find(bad.string() + ": end-of-generation token id 1048576"), std::string::npos)
      << out;
}

TEST_F(Deepseek32Gguf, ProfileCheckAndStatsTakeTheFile) {
  const auto [check_status, check_out] = test::run_shell(
      fmt::format("{}/glmrt profile check {}/configs/reference.yaml --model {} 2>&1",
                  GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, file_.string()));
  EXPECT_EQ(check_status, 0) << check_out;
  EXPECT_NE(check_out.find("total"), std::string::npos) << check_out;
  const fs::path cache = dir_.path() / "cache";
  const auto [stats_status, stats_out] =
      test::run_shell(fmt::format("XDG_CACHE_HOME={} {}/glmrt stats --model {} 2>&1",
                                  cache.string(), GLMRT_BUILD_DIR, file_.string()));
  EXPECT_EQ(stats_status, 0) << stats_out;
}

TEST_F(Deepseek32Gguf, SplitModelOpensFromItsFirstShardOrItsFolder) {
  const fs::path folder = dir_.path() / "split";
  fs::create_directory(folder);
  test::write_gguf_from_checkpoint(kCheckpoint, folder / "v32.gguf", "deepseek32", {}, 3);
  const fs::path first = folder / "v32-00001-of-00003.gguf";
  ASSERT_TRUE(fs::exists(folder / "v32-00003-of-00003.gguf"));
  const TensorDirectory tensors = TensorDirectory::open(first);
  EXPECT_EQ(tensors.files().size(), 3u);
  for (const fs::path& model : {first, folder}) {
    const auto [status, out] = test::run_shell(fmt::format(
        "{}/glmrt validate --profile {}/configs/reference.yaml --model {} --ref {} --json "
        "2>/dev/null",
        GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, model.string(), (kCheckpoint / "ref.json").string()));
    EXPECT_EQ(status, 0) << model << out;
  }
}

}  // namespace
}  // namespace glmrt
