// Layer kinds derived from the several ways configs spell them, against
// hand-computed layer lists.
#include <gtest/gtest.h>

#include <glmrt/model_files/model_config.h>
#include "config_test_util.h"

namespace glmrt {
namespace {

using nlohmann::json;
using test::ConfigVariant;

constexpr IndexerKind F = IndexerKind::full;
constexpr IndexerKind S = IndexerKind::shared;
constexpr MlpKind D = MlpKind::dense;
constexpr MlpKind M = MlpKind::sparse;

// glm_tiny with `layers` layers and no explicit per-layer lists, then `edit`.
ConfigVariant without_lists(int layers, const std::function<void(json&)>& edit) {
  return ConfigVariant([&](json& c) {
    c["num_hidden_layers"] = layers;
    c.erase("indexer_types");
    c.erase("mlp_layer_types");
    edit(c);
  });
}

TEST(IndexerKinds, PatternLetters) {
  const auto c = without_lists(4, [](json& c) { c["index_topk_pattern"] = "FSSF"; }).load();
  EXPECT_EQ(c.indexer_types, (std::vector<IndexerKind>{F, S, S, F}));
  EXPECT_EQ(c.indexer_kind(1), S);
  EXPECT_EQ(c.indexer_kind(4), F);  // MTP layer
}

TEST(IndexerKinds, PatternErrors) {
  without_lists(4, [](json& c) {
    c["index_topk_pattern"] = "SFFF";
  }).expect_refused({"'index_topk_pattern'", "layer 0"});
  without_lists(4, [](json& c) {
    c["index_topk_pattern"] = "FSF";
  }).expect_refused({"'index_topk_pattern'", "one letter per layer"});
  without_lists(4, [](json& c) {
    c["index_topk_pattern"] = "FSxF";
  }).expect_refused({"'index_topk_pattern'", "'x'"});
}

TEST(IndexerKinds, FrequencyAndOffset) {
  // full when max(i - 2 + 1, 0) % 4 == 0: i = 0, 1, 5, 9.
  const auto c = without_lists(10, [](json& c) {
                   c["index_topk_freq"] = 4;
                   c["index_skip_topk_offset"] = 2;
                 }).load();
  EXPECT_EQ(c.indexer_types, (std::vector<IndexerKind>{F, F, S, S, S, F, S, S, S, F}));

  // Offset defaults to 2: full when max(i - 1, 0) % 3 == 0: i = 0, 1, 4, 7.
  const auto d = without_lists(8, [](json& c) { c["index_topk_freq"] = 3; }).load();
  EXPECT_EQ(d.indexer_types, (std::vector<IndexerKind>{F, F, S, S, F, S, S, F}));

  // offset 1: full when i % 2 == 0.
  const auto e = without_lists(5, [](json& c) {
                   c["index_topk_freq"] = 2;
                   c["index_skip_topk_offset"] = 1;
                 }).load();
  EXPECT_EQ(e.indexer_types, (std::vector<IndexerKind>{F, S, F, S, F}));
}

TEST(IndexerKinds, DefaultsAreAllFull) {
  EXPECT_EQ(without_lists(6, [](json&) {}).load().indexer_types, std::vector<IndexerKind>(6, F));
}

TEST(IndexerKinds, OffsetZeroMakesLayerZeroSharedAndIsRefused) {
  // max(0 - 0 + 1, 0) % 3 = 1: layer 0 would be shared.
  without_lists(6, [](json& c) {
    c["index_topk_freq"] = 3;
    c["index_skip_topk_offset"] = 0;
  }).expect_refused({"layer 0", "index_topk_freq"});
  without_lists(6, [](json& c) { c["index_topk_freq"] = 0; }).expect_refused({"'index_topk_freq'"});
}

TEST(IndexerKinds, ExplicitListWins) {
  const auto c = ConfigVariant([](json& c) {
                   c["indexer_types"] = {"full", "shared", "full", "shared"};
                   c["index_topk_pattern"] = "FFFF";
                 }).load();
  EXPECT_EQ(c.indexer_types, (std::vector<IndexerKind>{F, S, F, S}));
  ConfigVariant([](json& c) {
    c["indexer_types"] = {"shared", "full", "full", "full"};
  }).expect_refused({"'indexer_types'", "layer 0"});
  ConfigVariant([](json& c) {
    c["indexer_types"] = {"full", "full", "full"};
  }).expect_refused({"'indexer_types'", "one entry per layer"});
  ConfigVariant([](json& c) {
    c["indexer_types"] = {"full", "half", "full", "full"};
  }).expect_refused({"'indexer_types'", "half"});
}

TEST(MlpKinds, ExplicitList) {
  ConfigVariant([](json& c) {
    c["mlp_layer_types"] = {"dense", "sparse"};
  }).expect_refused({"'mlp_layer_types'", "one entry per layer"});
  ConfigVariant([](json& c) {
    c["mlp_layer_types"] = {"dense", "moe", "sparse", "sparse"};
  }).expect_refused({"'mlp_layer_types'", "moe"});
  const auto c = ConfigVariant([](json& c) {
                   c["mlp_layer_types"] = {"dense", "dense", "sparse", "dense"};
                 }).load();
  EXPECT_EQ(c.mlp_layer_types, (std::vector<MlpKind>{D, D, M, D}));
}

TEST(MlpKinds, FirstKDenseReplace) {
  const auto c = without_lists(5, [](json& c) {
                   c["first_k_dense_replace"] = 3;
                   c.erase("moe_layer_freq");
                 }).load();
  EXPECT_EQ(c.mlp_layer_types, (std::vector<MlpKind>{D, D, D, M, M}));
  EXPECT_EQ(c.mlp_kind(5), M);  // MTP layer
}

TEST(MlpKinds, MoeLayerFrequency) {
  // Sparse when i >= 2 and i % 2 == 0.
  const auto c = without_lists(7, [](json& c) {
                   c["first_k_dense_replace"] = 2;
                   c["moe_layer_freq"] = 2;
                 }).load();
  EXPECT_EQ(c.mlp_layer_types, (std::vector<MlpKind>{D, D, M, D, M, D, M}));
  without_lists(4, [](json& c) { c["moe_layer_freq"] = 0; }).expect_refused({"'moe_layer_freq'"});
  without_lists(4, [](json& c) {
    c["first_k_dense_replace"] = 5;
  }).expect_refused({"'first_k_dense_replace'"});
}

}  // namespace
}  // namespace glmrt
