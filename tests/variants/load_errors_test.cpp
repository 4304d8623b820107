// A checkpoint that does not match its config must be refused when loaded,
// with a message naming the offending tensor.
#include <glmrt/base/error.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "checkpoint_generator.h"
#include "variant_harness.h"

namespace glmrt::test {
namespace {

// Writes the base config (edited by `edit_config`) with the tensors of
// `tensor_config` (edited by `edit_tensors`) and expects opening it to fail
// with a message holding every needle.
void expect_load_error(const std::function<void(nlohmann::json&)>& edit_config,
                       const std::function<void(TensorList&)>& edit_tensors,
                       const std::vector<std::string>& needles) {
  const nlohmann::json tensor_config = base_variant_config();
  nlohmann::json config = tensor_config;
  edit_config(config);
  TensorList tensors = make_checkpoint_tensors({tensor_config, /*seed=*/5});
  edit_tensors(tensors);
  ScratchDir dir("glmrt-load-error");
  write_checkpoint(dir.path(), config, tensors, 2);
  try {
    open_reference_engine(dir.path());
    ADD_FAILURE() << "the checkpoint loaded; expected an error naming " << needles.front();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const std::string& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos)
          << "message lacks \"" << needle << "\": " << message;
  }
}

void no_config_change(nlohmann::json&) {}
void no_tensor_change(TensorList&) {}

void layer_1_shared(nlohmann::json& c) {
  c["indexer_types"] = {"full", "shared", "full", "full", "full"};
}

TEST(LoadErrors, SharedIndexerLayerCarryingIndexerTensors) {
  expect_load_error(layer_1_shared, no_tensor_change,
                    {"model.layers.1.self_attn.indexer.", "shared"});
}

TEST(LoadErrors, SharedIndexerLayerCarryingOneStrayIndexerTensor) {
  const std::string stray = "model.layers.1.self_attn.indexer.weights_proj.weight";
  expect_load_error(
      layer_1_shared,
      [&](TensorList& t) {
        for (const char* name : {"wq_b.weight", "wk.weight", "k_norm.weight", "k_norm.bias"})
          ASSERT_TRUE(erase_tensor(t, std::string("model.layers.1.self_attn.indexer.") + name));
      },
      {stray, "shared"});
}

TEST(LoadErrors, FullIndexerLayerMissingAnIndexerTensor) {
  const std::string missing = "model.layers.3.self_attn.indexer.wk.weight";
  expect_load_error(no_config_change, [&](TensorList& t) { ASSERT_TRUE(erase_tensor(t, missing)); },
                    {missing});
}

// Gives `name` one column too many (values follow the shape).
std::function<void(TensorList&)> widen(const std::string& name) {
  return [name](TensorList& tensors) {
    HostTensor* t = find_tensor(tensors, name);
    ASSERT_NE(t, nullptr) << name;
    t->shape.back() += 1;
    t->values.resize(t->numel(), 0.5f);
  };
}

TEST(LoadErrors, AttentionTensorWithTheWrongShape) {
  const std::string name = "model.layers.2.self_attn.q_b_proj.weight";
  expect_load_error(no_config_change, widen(name), {name, "41"});
}

TEST(LoadErrors, KvBTensorWithTheWrongShape) {
  const std::string name = "model.layers.4.self_attn.kv_b_proj.weight";
  expect_load_error(no_config_change, widen(name), {name});
}

TEST(LoadErrors, NormWithTheWrongLength) {
  const std::string name = "model.layers.1.post_attention_layernorm.weight";
  expect_load_error(no_config_change, widen(name), {name, "49"});
}

TEST(LoadErrors, ExpertTensorWithTheWrongShape) {
  const std::string name = "model.layers.3.mlp.experts.5.gate_proj.weight";
  expect_load_error(no_config_change, widen(name), {name, "49"});
}

TEST(LoadErrors, MissingExpertTensor) {
  const std::string missing = "model.layers.3.mlp.experts.7.down_proj.weight";
  expect_load_error(no_config_change, [&](TensorList& t) { ASSERT_TRUE(erase_tensor(t, missing)); },
                    {missing});
}

TEST(LoadErrors, MissingMtpExpertTensor) {
  const std::string missing = "model.layers.5.mlp.experts.11.up_proj.weight";
  expect_load_error(no_config_change, [&](TensorList& t) { ASSERT_TRUE(erase_tensor(t, missing)); },
                    {missing});
}

TEST(LoadErrors, DenseLayerBySparseConfigMissingItsExperts) {
  // The config says layer 2 is sparse; its tensors are a dense MLP's.
  expect_load_error(
      [](nlohmann::json& c) {
        c["mlp_layer_types"] = {"dense", "sparse", "sparse", "sparse", "sparse"};
      },
      no_tensor_change, {"model.layers.2.mlp."});
}

}  // namespace
}  // namespace glmrt::test
