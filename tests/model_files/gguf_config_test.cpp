// The config and tensors of llama.cpp-made GGUFs, as the model reads them:
// every field against the Hugging Face config.json each fixture came from
// (shared/gguf/*/config.json), every tensor name and view against the layout.
#include <glmrt/base/error.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/gguf_writer.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <glmrt/plugin/ggml_types.h>

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
const fs::path kGlmDsa = fs::path(GLMRT_FIXTURES) / "gguf" / "glm_dsa-Q4_K_M.gguf";
const fs::path kDeepseekV3 = fs::path(GLMRT_FIXTURES) / "gguf" / "deepseek_v3-IQ2_XXS.gguf";

TEST(GgufConfig, GlmDsaMatchesItsConfigJson) {
  const TensorDirectory tensors = TensorDirectory::open(kGlmDsa);
  const ModelConfig c = load_model_config(kGlmDsa, tensors);
  EXPECT_EQ(c.model_type, "glm_moe_dsa");
  EXPECT_EQ(c.vocab_size, 1024);
  EXPECT_EQ(c.hidden_size, 256);
  EXPECT_EQ(c.intermediate_size, 512);
  EXPECT_EQ(c.moe_intermediate_size, 256);
  EXPECT_EQ(c.num_hidden_layers, 2);  // block_count 3 counts the MTP block
  EXPECT_EQ(c.num_nextn_predict_layers, 1);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.q_lora_rank, 256);
  EXPECT_EQ(c.kv_lora_rank, 256);
  EXPECT_EQ(c.qk_nope_head_dim, 64);
  EXPECT_EQ(c.qk_rope_head_dim, 64);
  EXPECT_EQ(c.v_head_dim, 64);
  EXPECT_EQ(c.n_routed_experts, 8);
  EXPECT_EQ(c.n_shared_experts, 1);
  EXPECT_EQ(c.num_experts_per_tok, 4);
  EXPECT_EQ(c.n_group, 1);
  EXPECT_EQ(c.topk_group, 1);
  EXPECT_TRUE(c.norm_topk_prob);
  EXPECT_EQ(c.routed_scaling_factor, 2.5);
  EXPECT_EQ(c.rms_norm_eps, 1e-5);  // the float32 key read as its shortest decimal
  EXPECT_EQ(c.max_position_embeddings, 4096);
  EXPECT_EQ(c.rope.theta, 10000.0);
  EXPECT_FALSE(c.rope.yarn);
  EXPECT_TRUE(c.rope_interleave);
  EXPECT_TRUE(c.indexer_rope_interleave);
  EXPECT_EQ(c.index_n_heads, 2);
  EXPECT_EQ(c.index_head_dim, 128);
  EXPECT_EQ(c.index_topk, 8);
  EXPECT_EQ(c.indexer_types, (std::vector<IndexerKind>{IndexerKind::full, IndexerKind::full}));
  EXPECT_EQ(c.mlp_layer_types, (std::vector<MlpKind>{MlpKind::dense, MlpKind::sparse}));
  EXPECT_EQ(c.eos_token_ids, (std::vector<int>{1010, 1017, 1019}));
  EXPECT_EQ(c.bos_token_id, 0);
  EXPECT_EQ(c.pad_token_id, 1010);
  EXPECT_FALSE(c.tie_word_embeddings);
}

TEST(GgufConfig, DeepseekV3YarnAndGroupsMatchItsConfigJson) {
  const ModelConfig c = load_model_config(kDeepseekV3, TensorDirectory::open(kDeepseekV3));
  EXPECT_EQ(c.model_type, "deepseek_v3");
  EXPECT_EQ(c.num_hidden_layers, 2);
  EXPECT_EQ(c.num_nextn_predict_layers, 0);
  EXPECT_EQ(c.qk_nope_head_dim, 64);
  EXPECT_EQ(c.qk_rope_head_dim, 32);
  EXPECT_EQ(c.n_group, 4);
  EXPECT_EQ(c.topk_group, 2);
  EXPECT_EQ(c.num_experts_per_tok, 3);
  EXPECT_EQ(c.rms_norm_eps, 1e-6);
  EXPECT_EQ(c.max_position_embeddings, 256);
  EXPECT_TRUE(c.rope.yarn);
  EXPECT_EQ(c.rope.scaling.factor, 4.0);
  EXPECT_EQ(c.rope.scaling.original_max_position_embeddings, 64.0);
  EXPECT_EQ(c.rope.scaling.beta_fast, 32.0);
  EXPECT_EQ(c.rope.scaling.beta_slow, 1.0);
  // mscale = mscale_all_dim = 1: cos/sin unscaled, softmax scaled by mscale(4, 1)^2.
  EXPECT_DOUBLE_EQ(c.rope.attention_factor, 1.0);
  EXPECT_DOUBLE_EQ(c.rope.softmax_multiplier, yarn_mscale(4.0, 1.0) * yarn_mscale(4.0, 1.0));
  EXPECT_EQ(c.eos_token_ids, (std::vector<int>{1}));
}

TEST(GgufTensors, ExpertsAreSlicesAndKvBIsSplitPerHead) {
  const TensorDirectory tensors = TensorDirectory::open(kGlmDsa);
  EXPECT_TRUE(tensors.is_gguf());
  const gguf::Model file = gguf::Model::open(kGlmDsa);
  const gguf::TensorInfo& down = file.at("blk.1.ffn_down_exps.weight");
  const TensorInfo& e7 = tensors.at("model.layers.1.mlp.experts.7.down_proj.weight");
  EXPECT_EQ(e7.shape, (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(e7.byte_size, down.byte_size / 8);
  EXPECT_EQ(e7.offset, down.offset + 7 * (down.byte_size / 8));
  EXPECT_EQ(tensors.at("model.layers.0.self_attn.kv_b_proj.key_absorb").shape,
            (std::vector<int64_t>{4 * 256, 64}));
  EXPECT_EQ(tensors.at("model.layers.0.self_attn.kv_b_proj.value").shape,
            (std::vector<int64_t>{4 * 64, 256}));
  EXPECT_EQ(tensors.at("model.layers.0.self_attn.indexer.weights_proj.weight").shape,
            (std::vector<int64_t>{2, 256}));
  EXPECT_TRUE(tensors.contains("model.layers.2.eh_proj.weight"));
  EXPECT_TRUE(tensors.contains("model.layers.2.shared_head.norm.weight"));
  EXPECT_TRUE(tensors.contains("lm_head.weight"));
  // A Q4_K row dequantizes as read; norms stay F32.
  EXPECT_EQ(tensors.at("model.layers.0.self_attn.q_a_proj.weight").dtype, DType::GGML);
  EXPECT_EQ(tensors.at("model.norm.weight").dtype, DType::F32);
  const std::vector<float> q_a =
      tensors.read_f32(tensors.at("model.layers.0.self_attn.q_a_proj.weight"));
  EXPECT_EQ(q_a.size(), 256u * 256u);
}

TEST(GgufTensors, FolderHoldingOneGgufOpensAsTheModel) {
  EXPECT_TRUE(is_gguf_model(kGlmDsa));
  EXPECT_FALSE(is_gguf_model(fs::path(GLMRT_FIXTURES) / "glm_tiny"));
}

}  // namespace
}  // namespace glmrt

namespace glmrt {
namespace {

TEST(GgufTensors, EmptyOrOverlyManyExpertsRefusedNamingTheTensor) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("glmrt-gguf-dims-{}", ::getpid());
  fs::create_directories(dir);
  const auto error_of = [&](const std::string& name, std::vector<int64_t> dims) {
    gguf::Writer w;
    w.set("general.architecture", gguf::Value::str("deepseek2"));
    w.add_tensor(name, GLMRT_GGML_F32, std::move(dims));
    w.write(dir / "m.gguf", [](size_t, int64_t, std::span<std::byte> out) {
      std::fill(out.begin(), out.end(), std::byte{0});
    });
    try {
      TensorDirectory::open(dir / "m.gguf");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string empty = error_of("output_norm.weight", {0});
  EXPECT_NE(empty.find("output_norm.weight"), std::string::npos) << empty;
  EXPECT_NE(empty.find("no empty dimension"), std::string::npos) << empty;
  const std::string many = error_of("blk.1.ffn_up_exps.weight", {1, 1, int64_t{1} << 17});
  EXPECT_NE(many.find("blk.1.ffn_up_exps.weight"), std::string::npos) << many;
  EXPECT_NE(many.find("at most 65536 experts"), std::string::npos) << many;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace glmrt
