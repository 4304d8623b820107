// config.json of glm_moe_dsa: values, defaults, and refusals naming file and key.
#include <gtest/gtest.h>

#include <glmrt/model_files/model_config.h>
#include "config_test_util.h"

namespace glmrt {
namespace {

using nlohmann::json;
using test::ConfigVariant;

const std::filesystem::path kTinyConfigDir = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";

TEST(ModelConfig, GlmTinyValues) {
  const ModelConfig c = load_model_config(kTinyConfigDir);
  EXPECT_EQ(c.file, kTinyConfigDir / "config.json");
  EXPECT_EQ(c.model_type, "glm_moe_dsa");
  EXPECT_EQ(c.vocab_size, 1024);
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.intermediate_size, 96);
  EXPECT_EQ(c.moe_intermediate_size, 32);
  EXPECT_EQ(c.num_hidden_layers, 4);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.q_lora_rank, 32);
  EXPECT_EQ(c.kv_lora_rank, 16);
  EXPECT_EQ(c.qk_nope_head_dim, 16);
  EXPECT_EQ(c.qk_rope_head_dim, 8);
  EXPECT_EQ(c.qk_head_dim(), 24);
  EXPECT_EQ(c.v_head_dim, 16);
  EXPECT_EQ(c.n_routed_experts, 16);
  EXPECT_EQ(c.n_shared_experts, 1);
  EXPECT_EQ(c.num_experts_per_tok, 4);
  EXPECT_EQ(c.n_group, 1);
  EXPECT_EQ(c.topk_group, 1);
  EXPECT_TRUE(c.norm_topk_prob);
  EXPECT_EQ(c.routed_scaling_factor, 2.5);
  EXPECT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_EQ(c.rope.theta, 10000.0);
  EXPECT_TRUE(c.rope_interleave);
  EXPECT_FALSE(c.indexer_rope_interleave);
  EXPECT_EQ(c.index_topk, 8);
  EXPECT_EQ(c.index_head_dim, 16);
  EXPECT_EQ(c.index_n_heads, 2);
  EXPECT_EQ(c.num_nextn_predict_layers, 1);
  EXPECT_EQ(c.max_position_embeddings, 4096);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int>{1010, 1017, 1019}));
  EXPECT_EQ(c.bos_token_id, 0);
  EXPECT_EQ(c.pad_token_id, 1010);
  EXPECT_EQ(c.mlp_layer_types, (std::vector<MlpKind>{MlpKind::dense, MlpKind::sparse,
                                                     MlpKind::sparse, MlpKind::sparse}));
  EXPECT_EQ(c.indexer_types, std::vector<IndexerKind>(4, IndexerKind::full));
  // The MTP layer sits at index num_hidden_layers.
  EXPECT_EQ(c.mlp_kind(4), MlpKind::sparse);
  EXPECT_EQ(c.indexer_kind(4), IndexerKind::full);
  EXPECT_EQ(c.mlp_kind(0), MlpKind::dense);
  test::expect_error([&] { c.mlp_kind(-1); }, {"layer -1"});
}

TEST(ModelConfig, MissingFile) {
  test::TempFolder tmp;
  test::expect_error([&] { load_model_config(tmp.path()); },
                     {(tmp.path() / "config.json").string()});
}

TEST(ModelConfig, InvalidJson) {
  test::TempFolder tmp;
  test::write_file(tmp.path() / "config.json", R"({"model_type": )");
  test::expect_error([&] { load_model_config(tmp.path()); }, {"config.json", "not valid JSON"});
}

// Found by fuzz_model_config: a number beyond double's range made the JSON
// library throw out_of_range, which escaped without naming the file.
TEST(ModelConfig, NumberOutOfRangeNamesTheFile) {
  test::TempFolder tmp;
  test::write_file(tmp.path() / "config.json", R"({"rope_theta": 1e400})");
  test::expect_error([&] { load_model_config(tmp.path()); },
                     {(tmp.path() / "config.json").string(), "not valid JSON", "1e400"});
}

TEST(ModelConfig, MissingRequiredKey) {
  ConfigVariant([](json& c) {
    c.erase("hidden_size");
  }).expect_refused({"'hidden_size'", "missing"});
  ConfigVariant([](json& c) { c.erase("index_topk"); }).expect_refused({"'index_topk'"});
  ConfigVariant([](json& c) { c["kv_lora_rank"] = nullptr; }).expect_refused({"'kv_lora_rank'"});
}

TEST(ModelConfig, MistypedKey) {
  ConfigVariant([](json& c) {
    c["hidden_size"] = "64";
  }).expect_refused({"'hidden_size'", "integer"});
  ConfigVariant([](json& c) { c["hidden_size"] = 64.5; }).expect_refused({"'hidden_size'"});
  ConfigVariant([](json& c) { c["norm_topk_prob"] = 1; }).expect_refused({"'norm_topk_prob'"});
  ConfigVariant([](json& c) { c["rms_norm_eps"] = "1e-5"; }).expect_refused({"'rms_norm_eps'"});
  ConfigVariant([](json& c) { c["vocab_size"] = 1ll << 40; }).expect_refused({"'vocab_size'"});
}

// Shown by fuzz_model_config under UBSan: qk_head_dim() = nope + rope overflowed int.
TEST(ModelConfig, HeadSizeOverflowIsRefused) {
  ConfigVariant([](json& c) {
    c["qk_nope_head_dim"] = 2147483647;
  }).expect_refused({"'qk_nope_head_dim' (2147483647) + 'qk_rope_head_dim' (8)"});
}

// Read alone (no checkpoint to compare with), a config with 1e9 layers and no
// per-layer lists built 1e9 layer kinds: seconds and gigabytes.
TEST(ModelConfig, AbsurdLayerCountIsRefusedWithoutACheckpoint) {
  ConfigVariant([](json& c) {
    c["num_hidden_layers"] = 1000000000;
    c.erase("mlp_layer_types");
    c.erase("indexer_types");
  }).expect_refused({"'num_hidden_layers' is 1000000000, expected at most 65536"});
}

TEST(ModelConfig, WrongModelType) {
  ConfigVariant([](json& c) { c["model_type"] = "llama"; })
      .expect_refused(
          {"'model_type'", "llama", "supported: glm_moe_dsa, deepseek_v3, kimi_k2, deepseek_v32"});
  ConfigVariant([](json& c) { c.erase("model_type"); }).expect_refused({"'model_type'"});
}

TEST(ModelConfig, RopeScalingIsRefusedByName) {
  ConfigVariant([](json& c) {
    c["rope_parameters"]["rope_type"] = "dynamic";
  }).expect_refused({"rope_parameters.rope_type", "dynamic", "\"yarn\""});
  // rope_parameters gives the RoPE: a scaling beside it would be ignored.
  ConfigVariant([](json& c) {
    c["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
  }).expect_refused({"'rope_parameters' and 'rope_scaling'", "yarn"});
  ConfigVariant([](json& c) {
    c["rope_scaling"] = {{"rope_type", "linear"}};
  }).expect_refused({"rope_scaling.rope_type", "linear"});
  ConfigVariant([](json& c) {
    c["rope_scaling"] = {{"factor", 4.0}};
  }).expect_refused({"'rope_scaling'"});
}

TEST(ModelConfig, RopeThetaSources) {
  EXPECT_EQ(ConfigVariant([](json& c) {
              c["rope_parameters"]["rope_theta"] = 500000.0;
              c["rope_theta"] = 1.0;  // rope_parameters wins
              c["rope_scaling"] = nullptr;
            })
                .load()
                .rope.theta,
            500000.0);
  EXPECT_EQ(ConfigVariant([](json& c) {
              c.erase("rope_parameters");
              c["rope_theta"] = 1000000;
              c["rope_scaling"] = {{"type", "default"}};
            })
                .load()
                .rope.theta,
            1000000.0);
  EXPECT_EQ(ConfigVariant([](json& c) { c.erase("rope_parameters"); }).load().rope.theta, 10000.0);
}

TEST(ModelConfig, QuantizedCheckpointIsRefused) {
  ConfigVariant([](json& c) {
    c["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  }).expect_refused({"'quantization_config'", "fp8"});
  ConfigVariant([](json& c) {
    c["quantization_config"] = {{"quant_method", "awq"}};
  }).expect_refused({"'quantization_config'", "awq"});
}

TEST(ModelConfig, EosTokenIdIntOrList) {
  EXPECT_EQ(ConfigVariant([](json& c) { c["eos_token_id"] = 7; }).load().eos_token_ids,
            std::vector<int>{7});
  EXPECT_EQ(ConfigVariant([](json& c) {
              c["eos_token_id"] = {3, 4};
            })
                .load()
                .eos_token_ids,
            (std::vector<int>{3, 4}));
  EXPECT_TRUE(ConfigVariant([](json& c) { c.erase("eos_token_id"); }).load().eos_token_ids.empty());
  ConfigVariant([](json& c) { c["eos_token_id"] = {3, "x"}; }).expect_refused({"'eos_token_id'"});
  EXPECT_EQ(ConfigVariant([](json& c) { c["bos_token_id"] = nullptr; }).load().bos_token_id, -1);
}

// glm_tiny has 1024 tokens: an id past them (or -1) was accepted silently.
TEST(ModelConfig, SpecialTokenIdsOutsideTheVocabularyAreRefused) {
  ConfigVariant([](json& c) {
    c["eos_token_id"] = 5000;
  }).expect_refused({"'eos_token_id'", "5000", "vocab_size 1024"});
  ConfigVariant([](json& c) {
    c["eos_token_id"] = {1010, 1024};
  }).expect_refused({"'eos_token_id'", "1024", "ids 0 to 1023"});
  ConfigVariant([](json& c) {
    c["eos_token_id"] = -1;
  }).expect_refused({"'eos_token_id'", "-1", "vocab_size 1024"});
  ConfigVariant([](json& c) {
    c["bos_token_id"] = 99999;
  }).expect_refused({"'bos_token_id'", "99999", "vocab_size 1024"});
  ConfigVariant([](json& c) {
    c["pad_token_id"] = -1;
  }).expect_refused({"'pad_token_id'", "-1", "vocab_size 1024"});
  // The last id is a token; absent and null keys stay allowed.
  EXPECT_EQ(ConfigVariant([](json& c) { c["eos_token_id"] = 1023; }).load().eos_token_ids,
            std::vector<int>{1023});
  EXPECT_EQ(ConfigVariant([](json& c) { c.erase("pad_token_id"); }).load().pad_token_id, -1);
}

TEST(ModelConfig, InterleaveDefaultsWhenAbsent) {
  const ModelConfig c = ConfigVariant([](json& c) {
                          c.erase("rope_interleave");
                          c.erase("indexer_rope_interleave");
                        }).load();
  EXPECT_TRUE(c.rope_interleave);
  EXPECT_FALSE(c.indexer_rope_interleave);
  EXPECT_TRUE(ConfigVariant([](json& c) { c["indexer_rope_interleave"] = true; })
                  .load()
                  .indexer_rope_interleave);
}

TEST(ModelConfig, ExpertGroupingIsValidated) {
  const ModelConfig grouped = ConfigVariant([](json& c) {
                                c["n_group"] = 4;
                                c["topk_group"] = 2;
                              }).load();
  EXPECT_EQ(grouped.n_group, 4);
  EXPECT_EQ(grouped.topk_group, 2);
  ConfigVariant([](json& c) { c["n_group"] = 3; }).expect_refused({"'n_group'", "divide"});
  ConfigVariant([](json& c) {
    c["n_group"] = 4;
    c["topk_group"] = 5;
  }).expect_refused({"'topk_group'"});
  ConfigVariant([](json& c) {
    c["num_experts_per_tok"] = 17;
  }).expect_refused({"'num_experts_per_tok'"});
  ConfigVariant([](json& c) {
    c["n_group"] = 8;
    c["topk_group"] = 1;
  }).expect_refused({"'num_experts_per_tok'", "topk_group"});
}

TEST(ModelConfig, DimensionsAreValidated) {
  ConfigVariant([](json& c) { c["qk_head_dim"] = 23; }).expect_refused({"'qk_head_dim'", "24"});
  ConfigVariant([](json& c) { c["index_topk"] = 0; }).expect_refused({"'index_topk'", "positive"});
  ConfigVariant([](json& c) { c["hidden_size"] = -64; }).expect_refused({"'hidden_size'"});
  ConfigVariant([](json& c) { c["qk_rope_head_dim"] = 7; }).expect_refused({"'qk_rope_head_dim'"});
  ConfigVariant([](json& c) {
    c["routed_scaling_factor"] = 0;
  }).expect_refused({"'routed_scaling_factor'"});
  // head_dim (the rope width in HF's config) is not qk_head_dim and is not checked against it.
  EXPECT_EQ(ConfigVariant([](json& c) { c.erase("qk_head_dim"); }).load().qk_head_dim(), 24);
}

}  // namespace
}  // namespace glmrt
