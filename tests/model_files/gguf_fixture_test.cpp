// GGUF files made by llama.cpp (tests/fixtures/gguf, see its README.md) read
// as its own tools read them: the keys, the tensor types and shapes.
#include <gtest/gtest.h>

#include <glmrt/model_files/gguf.h>
#include <glmrt/plugin/ggml_types.h>

#include <map>

#include "test_files.h"

namespace glmrt {
namespace {

const std::filesystem::path kFixtures = std::filesystem::path(GLMRT_FIXTURES) / "gguf";

TEST(GgufFixture, DeepSeekV3Iq2xxsFromLlamaQuantize) {
  const gguf::Model model = gguf::Model::open(kFixtures / "deepseek_v3-IQ2_XXS.gguf");
  const gguf::Metadata& m = model.metadata();
  EXPECT_EQ(model.header(0).version, 3u);
  EXPECT_EQ(m.size(), 48u);
  EXPECT_EQ(m.get<std::string>("general.architecture"), "deepseek2");
  EXPECT_EQ(m.get<uint32_t>("deepseek2.block_count"), 2u);
  EXPECT_EQ(m.get<uint32_t>("deepseek2.expert_group_count"), 4u);
  EXPECT_EQ(m.get<std::string>("deepseek2.rope.scaling.type"), "yarn");
  EXPECT_EQ(m.get<float>("deepseek2.rope.scaling.factor"), 4.0f);
  EXPECT_EQ(m.get<float>("deepseek2.expert_weights_scale"), 2.5f);
  EXPECT_TRUE(m.get<bool>("deepseek2.expert_weights_norm"));
  EXPECT_EQ(m.get<uint32_t>("general.file_type"), 19u);
  const auto tokens = m.get<std::vector<std::string_view>>("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 1024u);
  EXPECT_EQ(tokens[0], "<t0>");
  EXPECT_EQ(tokens[1023], "<t1023>");
  EXPECT_EQ(m.get<std::vector<int32_t>>("tokenizer.ggml.token_type").size(), 1024u);

  // The README's count per type: IQ2_XXS 20, IQ4_NL 2, Q2_K 1 (token_embd), F32 11.
  std::map<std::string_view, int> per_type;
  for (const gguf::TensorInfo& t : model.tensors()) ++per_type[t.type_name()];
  EXPECT_EQ(per_type, (std::map<std::string_view, int>{
                          {"F32", 11}, {"IQ2_XXS", 20}, {"IQ4_NL", 2}, {"Q2_K", 1}}));
  const gguf::TensorInfo& k_b = model.at("blk.0.attn_k_b.weight");
  EXPECT_EQ(k_b.type, GLMRT_GGML_IQ4_NL);  // 64-long rows: the 256-block type falls back
  EXPECT_EQ(k_b.dims, (std::vector<int64_t>{64, 256, 4}));
  EXPECT_EQ(k_b.byte_size, 64u / 32 * 18 * 256 * 4);
  EXPECT_EQ(model.at("token_embd.weight").dims, (std::vector<int64_t>{256, 1024}));
  EXPECT_EQ(model.at("blk.1.ffn_up_exps.weight").dims, (std::vector<int64_t>{256, 256, 8}));
  EXPECT_EQ(model.at("output.weight").offset, model.header(0).data_offset);
}

TEST(GgufFixture, VocabOnlyGlmTiny) {
  const gguf::Model model = gguf::Model::open(kFixtures / "glm_tiny-vocab.gguf");
  const gguf::Metadata& m = model.metadata();
  EXPECT_TRUE(model.tensors().empty());
  EXPECT_EQ(m.get<std::string>("general.architecture"), "glm-dsa");
  EXPECT_EQ(m.get<std::string>("tokenizer.ggml.pre"), "glm4");
  EXPECT_EQ(m.get<std::vector<std::string>>("tokenizer.ggml.merges").size(), 744u);
  EXPECT_EQ(m.get<std::vector<std::string>>("tokenizer.ggml.merges")[0], "e r");
  EXPECT_EQ(m.get<uint32_t>("tokenizer.ggml.eos_token_id"), 1010u);
  EXPECT_EQ(m.get<uint32_t>("tokenizer.ggml.bos_token_id"), 1012u);
}

TEST(GgufFixture, TruncatedCopyNamesTheLastTensor) {
  const std::string whole = test::read_file(kFixtures / "deepseek_v3-IQ2_XXS.gguf");
  const gguf::Model model = gguf::Model::open(kFixtures / "deepseek_v3-IQ2_XXS.gguf");
  const gguf::TensorInfo* last = &model.tensors().front();
  for (const gguf::TensorInfo& t : model.tensors())
    if (t.offset > last->offset) last = &t;
  test::TempFolder tmp;
  const auto file = tmp.path() / "cut.gguf";
  test::write_file(file, whole.substr(0, last->offset + last->byte_size - 1));
  test::expect_error([&] { gguf::Model::open(file); },
                     {file.string(), "'" + last->name + "'", "truncated"});
}

}  // namespace
}  // namespace glmrt
