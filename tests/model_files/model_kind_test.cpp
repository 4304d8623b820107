// The model kinds: each model_type's choices resolved into the config, YaRN
// read as transformers resolves it, and what a kind refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/model_kind.h>
#include "config_test_util.h"

namespace glmrt {
namespace {

using nlohmann::json;
using test::ConfigVariant;

ConfigVariant deepseek(const std::function<void(json&)>& edit) {
  return ConfigVariant(edit, "deepseek_tiny");
}

// What transformers computed for deepseek_tiny (ref.json's `about`).
json deepseek_rope_about() {
  std::ifstream in(std::filesystem::path(GLMRT_FIXTURES) / "deepseek_tiny" / "ref.json");
  return json::parse(in).at("about").at("rope_as_computed_by_transformers");
}

TEST(ModelKind, EveryKindIsFoundByItsModelType) {
  for (const ModelKind& kind : model_kinds()) EXPECT_EQ(find_model_kind(kind.model_type), &kind);
  EXPECT_EQ(find_model_kind("llama"), nullptr);
  EXPECT_EQ(supported_model_types(), "glm_moe_dsa, deepseek_v3, kimi_k2, deepseek_v32");
}

TEST(ModelKind, DeepseekTinyResolvesYarnAsTransformersDid) {
  const ModelConfig c = deepseek([](json&) {}).load();
  const json about = deepseek_rope_about();
  ASSERT_NE(c.kind, nullptr);
  EXPECT_EQ(c.kind->model_type, "deepseek_v3");
  EXPECT_TRUE(c.rope.yarn);
  EXPECT_EQ(c.rope.theta, 10000.0);
  EXPECT_EQ(c.rope.scaling.factor, 4.0);
  EXPECT_EQ(c.rope.scaling.original_max_position_embeddings, 64.0);
  EXPECT_NEAR(c.rope.attention_factor, about.at("attention_factor_cos_sin").get<double>(), 1e-15);
  EXPECT_NEAR(c.rope.softmax_multiplier, about.at("softmax_mscale_squared").get<double>(), 1e-15);
  EXPECT_TRUE(c.rope_interleave);  // no rope_interleave key: interleaved
  EXPECT_EQ(c.lora_norm_eps, 1e-6);
  EXPECT_EQ(c.index_topk, 0);
  for (int layer = 0; layer <= c.num_hidden_layers; ++layer)
    EXPECT_EQ(c.indexer_kind(layer), IndexerKind::none) << layer;
  EXPECT_EQ(c.mlp_kind(0), MlpKind::dense);
  EXPECT_EQ(c.mlp_kind(1), MlpKind::sparse);
}

TEST(ModelKind, YarnAttentionFactorFollowsTransformersRules) {
  const double f = 40, ln = std::log(40.0);
  // mscale and mscale_all_dim both set: their ratio; the softmax gets mscale_all_dim's square.
  ModelConfig c = deepseek([&](json& j) {
                    j["rope_scaling"]["factor"] = f;
                    j["rope_scaling"]["mscale"] = 0.5;
                    j["rope_scaling"]["mscale_all_dim"] = 2.0;
                  }).load();
  EXPECT_NEAR(c.rope.attention_factor, (0.05 * ln + 1) / (0.2 * ln + 1), 1e-15);
  EXPECT_NEAR(c.rope.softmax_multiplier, std::pow(0.2 * ln + 1, 2), 1e-14);
  // Neither: 0.1 ln f + 1 on cos/sin, the softmax untouched.
  c = deepseek([&](json& j) {
        j["rope_scaling"]["factor"] = f;
        j["rope_scaling"].erase("mscale");
        j["rope_scaling"].erase("mscale_all_dim");
      }).load();
  EXPECT_NEAR(c.rope.attention_factor, 0.1 * ln + 1, 1e-15);
  EXPECT_EQ(c.rope.softmax_multiplier, 1.0);
  // An explicit attention_factor wins; a factor <= 1 scales nothing.
  c = deepseek([](json& j) { j["rope_scaling"]["attention_factor"] = 0.75; }).load();
  EXPECT_EQ(c.rope.attention_factor, 0.75);
  c = deepseek([](json& j) { j["rope_scaling"]["factor"] = 1.0; }).load();
  EXPECT_EQ(c.rope.attention_factor, 1.0);
  EXPECT_EQ(c.rope.softmax_multiplier, 1.0);
  // rope_parameters (transformers v5) carries the same, theta inside.
  c = deepseek([](json& j) {
        j["rope_parameters"] = j["rope_scaling"];
        j["rope_parameters"]["rope_theta"] = 50000.0;
        j.erase("rope_scaling");
      }).load();
  EXPECT_TRUE(c.rope.yarn);
  EXPECT_EQ(c.rope.theta, 50000.0);
  EXPECT_EQ(yarn_mscale(0.5, 3.0), 1.0);
}

TEST(ModelKind, YarnKeysAreCheckedByName) {
  deepseek([](json& j) {
    j["rope_scaling"]["alpha"] = 1;
  }).expect_refused({"'rope_scaling.alpha'", "not read by glmrt"});
  deepseek([](json& j) {
    j["rope_scaling"]["factor"] = -2;
  }).expect_refused({"'rope_scaling.factor'", "positive"});
  deepseek([](json& j) {
    j["rope_scaling"]["beta_fast"] = "fast";
  }).expect_refused({"'rope_scaling.beta_fast'", "number"});
  deepseek([](json& j) {
    j["rope_scaling"]["truncate"] = 1;
  }).expect_refused({"'rope_scaling.truncate'", "true or false"});
  deepseek([](json& j) {
    j["rope_scaling"]["type"] = "longrope";
  }).expect_refused({"'rope_scaling.type'", "longrope"});
  deepseek([](json& j) {
    j["rope_scaling"]["rope_type"] = "linear";
  }).expect_refused({"'rope_scaling.rope_type' and 'rope_scaling.type' disagree"});
  deepseek([](json& j) { j["rope_theta"] = 1; }).expect_refused({"rope_theta", "above 1"});
  // A default RoPE object reads no scaling keys.
  ConfigVariant([](json& j) {
    j["rope_parameters"]["factor"] = 4.0;
  }).expect_refused({"'rope_parameters.factor'", "default"});
  // Absent factor and original context: transformers' fallbacks.
  const ModelConfig c = deepseek([](json& j) { j["rope_scaling"].erase("factor"); }).load();
  EXPECT_EQ(c.rope.scaling.factor, 256.0 / 64.0);
}

TEST(ModelKind, QueryLoraIsOptionalForDeepseekV3Only) {
  for (const char* type : {"deepseek_v3", "kimi_k2"}) {
    const ModelConfig c = deepseek([&](json& j) {
                            j["model_type"] = type;
                            j["q_lora_rank"] = nullptr;
                          }).load();
    EXPECT_FALSE(c.has_q_lora()) << type;
  }
  ConfigVariant([](json& j) {
    j["q_lora_rank"] = nullptr;
  }).expect_refused({"'q_lora_rank'", "glm_moe_dsa needs the query LoRA"});
  deepseek([](json& j) {
    j["q_lora_rank"] = 0;
  }).expect_refused({"'q_lora_rank'", "positive or null"});
}

json v32_config() {
  json j = test::tiny_config_json("deepseek_tiny");
  j["model_type"] = "deepseek_v32";
  j["index_topk"] = 8;
  j["index_head_dim"] = 16;
  j["index_n_heads"] = 2;
  return j;
}

TEST(ModelKind, DeepseekV32HasAnIndexerOnEveryLayer) {
  const ModelConfig c = ConfigVariant([](json& j) { j = v32_config(); }).load();
  EXPECT_EQ(c.index_topk, 8);
  for (int layer = 0; layer <= c.num_hidden_layers; ++layer)
    EXPECT_EQ(c.indexer_kind(layer), IndexerKind::full) << layer;
  EXPECT_TRUE(c.rope_interleave);
  EXPECT_FALSE(c.indexer_rope_interleave);
  // Its modeling file fixes both pairings: a key saying otherwise is refused.
  ConfigVariant([](json& j) {
    j = v32_config();
    j["rope_interleave"] = false;
  }).expect_refused({"'rope_interleave'", "deepseek_v32 always uses interleaved"});
  ConfigVariant([](json& j) {
    j = v32_config();
    j["indexer_rope_interleave"] = true;
  }).expect_refused({"'indexer_rope_interleave'", "split-half"});
  EXPECT_NO_THROW(ConfigVariant([](json& j) {
                    j = v32_config();
                    j["rope_interleave"] = true;
                  }).load());
  ConfigVariant([](json& j) {
    j = v32_config();
    j.erase("index_topk");
  }).expect_refused({"'index_topk'"});
  ConfigVariant([](json& j) {
    j = v32_config();
    j["q_lora_rank"] = nullptr;
  }).expect_refused({"'q_lora_rank'", "deepseek_v32"});
}

TEST(ModelKind, GlmKeepsItsSharedIndexerLayers) {
  const ModelConfig c = ConfigVariant([](json& j) {
                          j["indexer_types"] = {"full", "shared", "full", "shared"};
                        }).load();
  EXPECT_EQ(c.kind->indexer, IndexerLayout::glm_shared);
  EXPECT_EQ(c.indexer_kind(1), IndexerKind::shared);
  EXPECT_EQ(c.indexer_kind(4), IndexerKind::full);  // the MTP layer
}

}  // namespace
}  // namespace glmrt
