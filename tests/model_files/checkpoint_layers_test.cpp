// num_hidden_layers against the layers a checkpoint's tensors hold: a count
// that disagrees is refused before anything is allocated per layer (1e9 used
// to run for minutes and grow to 8 GB), a missing MTP layer is a note.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>

#include <glmrt/model_files/checkpoint_layers.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include "config_test_util.h"

namespace glmrt {
namespace {

using nlohmann::json;
using test::TensorSpec;

/// One small F32 tensor per name.
std::string checkpoint_with(const std::vector<std::string>& names) {
  std::vector<TensorSpec> tensors;
  for (const std::string& name : names)
    tensors.push_back({name, "F32", {2}, test::bytes_of<float>({1.f, 2.f})});
  return test::safetensors_file(tensors);
}

/// glm_tiny's layout: 4 decoder layers and the MTP layer at index 4.
std::vector<std::string> tiny_layout_names(bool with_mtp) {
  std::vector<std::string> names = {"model.embed_tokens.weight", "model.norm.weight",
                                    "lm_head.weight"};
  for (int layer = 0; layer < 4; ++layer)
    for (const char* part :
         {"input_layernorm.weight", "self_attn.q_a_proj.weight", "mlp.experts.3.up_proj.weight"})
      names.push_back(fmt::format("model.layers.{}.{}", layer, part));
  if (with_mtp)
    for (const char* part : {"eh_proj.weight", "enorm.weight", "input_layernorm.weight"})
      names.push_back(fmt::format("model.layers.4.{}", part));
  return names;
}

/// A model directory: glm_tiny's config.json after `edit`, and a checkpoint.
class CheckpointDir {
 public:
  CheckpointDir(const std::function<void(json&)>& edit, bool with_mtp) {
    json config = test::tiny_config_json();
    edit(config);
    test::write_file(dir() / "config.json", config.dump());
    test::write_file(dir() / "model.safetensors", checkpoint_with(tiny_layout_names(with_mtp)));
  }
  std::filesystem::path dir() const { return tmp_.path(); }
  ModelConfig load() const { return load_model_config(dir(), TensorDirectory::open(dir())); }

 private:
  test::TempFolder tmp_;
};

void no_edit(json&) {}

TEST(CheckpointLayers, CountsDecoderLayersAndFindsTheMtpLayer) {
  test::TempFolder tmp;
  test::write_file(tmp.path() / "model.safetensors", checkpoint_with(tiny_layout_names(true)));
  const CheckpointLayers layers = CheckpointLayers::of(TensorDirectory::open(tmp.path()));
  EXPECT_EQ(layers.decoder_layers, 4);
  EXPECT_EQ(layers.mtp_layers, std::vector<int>{4});
  EXPECT_TRUE(layers.has_mtp_layer(4));
  EXPECT_FALSE(layers.has_mtp_layer(3));
}

TEST(CheckpointLayers, AMatchingCountLoads) {
  const ModelConfig c = CheckpointDir(no_edit, true).load();
  EXPECT_EQ(c.num_hidden_layers, 4);
  EXPECT_EQ(c.mlp_layer_types.size(), 4u);
}

TEST(CheckpointLayers, OneLayerMoreWouldRunTheMtpLayerAsADecoderLayer) {
  const CheckpointDir dir(
      [](json& c) {
        c["num_hidden_layers"] = 5;
        c["mlp_layer_types"].push_back("sparse");
        c["indexer_types"].push_back("full");
      },
      true);
  test::expect_error([&] { dir.load(); },
                     {"config.json", "'num_hidden_layers' is 5", "has 4 decoder layers",
                      "model.layers.4 is the multi-token-prediction layer"});
}

TEST(CheckpointLayers, OneLayerFewerWouldLeaveALayerUnused) {
  const CheckpointDir dir(
      [](json& c) {
        c["num_hidden_layers"] = 3;
        c["mlp_layer_types"].erase(3);
        c["indexer_types"].erase(3);
      },
      true);
  test::expect_error([&] { dir.load(); }, {"'num_hidden_layers' is 3", "has 4 decoder layers",
                                           "model.layers.3 would go unused"});
}

TEST(CheckpointLayers, AnAbsurdCountIsRefusedBeforeAnythingPerLayerIsBuilt) {
  const CheckpointDir dir(
      [](json& c) {
        c["num_hidden_layers"] = 1000000000;
        c.erase("mlp_layer_types");
        c.erase("indexer_types");
      },
      true);
  const auto start = std::chrono::steady_clock::now();
  test::expect_error([&] { dir.load(); },
                     {"'num_hidden_layers' is 1000000000", "has 4 decoder layers"});
  // Building the per-layer kinds first took minutes and 8 GB.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(CheckpointLayers, MtpAskedForButAbsentIsANoteNotAnError) {
  const CheckpointDir dir(no_edit, false);
  testing::internal::CaptureStderr();
  const ModelConfig c = dir.load();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.num_nextn_predict_layers, 1);
  EXPECT_NE(err.find("glmrt: note:"), std::string::npos) << err;
  EXPECT_NE(err.find("no model.layers.4.eh_proj.weight"), std::string::npos) << err;
}

TEST(CheckpointLayers, WithoutACheckpointTheConfigAloneLoads) {
  // Tools that read config.json alone (no tensors) get no cross-check.
  test::ConfigVariant variant([](json& c) {
    c["num_hidden_layers"] = 5;
    c["mlp_layer_types"].push_back("sparse");
    c["indexer_types"].push_back("full");
  });
  EXPECT_EQ(variant.load().num_hidden_layers, 5);
}

}  // namespace
}  // namespace glmrt
