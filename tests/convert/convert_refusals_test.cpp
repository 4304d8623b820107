// Inputs a container made of would not load: convert refuses them before it
// writes anything, and verify refuses such a container (made here without
// convert) instead of calling it OK — a q_a_proj, router, norm or embedding of
// the wrong shape, a missing matrix, a NaN in a norm or an infinity in the router, a config.json
// without model_type or with one glmrt does not run. FP8 block scales whose
// weight is absent and a quantization_config that is no object are refused
// naming the tensor or key. Verify checks finite values in every tensor it
// stores, routed experts' scales included.
#include <glmrt/base/error.h>
#include <glmrt/convert/container_verify.h>
#include <glmrt/convert/convert.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <glmrt/model_files/safetensors.h>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "convert_test_dir.h"
#include "safetensors_writer.h"
#include "small_checkpoint.h"

namespace glmrt::refusals_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::HostTensor;
using test::TensorList;

struct BadInput {
  const char* name;
  std::function<void(json& config, TensorList& tensors)> spoil;
  std::vector<std::string> message;  // parts the error must hold
};

HostTensor& tensor(TensorList& tensors, const std::string& name) {
  HostTensor* t = test::find_tensor(tensors, name);
  if (!t) throw std::runtime_error("no tensor " + name);
  return *t;
}

// The tensor with one more row (or, 1-D, one more element), values 0.01.
void grow(TensorList& tensors, const std::string& name) {
  HostTensor& t = tensor(tensors, name);
  t.shape[0] += 1;
  t.values.assign(static_cast<size_t>(t.numel()), 0.01f);
}

const std::vector<BadInput>& bad_inputs() {
  static const std::vector<BadInput> cases = {
      {"q_a_proj_shape",
       [](json&, TensorList& t) { grow(t, "model.layers.0.self_attn.q_a_proj.weight"); },
       {"model.layers.0.self_attn.q_a_proj.weight", "the config implies"}},
      {"router_shape",
       [](json&, TensorList& t) { grow(t, "model.layers.1.mlp.gate.weight"); },
       {"model.layers.1.mlp.gate.weight", "the config implies [2, 64]"}},
      {"norm_shape",
       [](json&, TensorList& t) { grow(t, "model.layers.0.input_layernorm.weight"); },
       {"model.layers.0.input_layernorm.weight", "the config implies [64]"}},
      {"embedding_shape",
       [](json&, TensorList& t) {
         HostTensor& e = tensor(t, "model.embed_tokens.weight");
         e.shape[1] += 8;
         e.values.assign(static_cast<size_t>(e.numel()), 0.01f);
       },
       {"model.embed_tokens.weight", "the config implies [64, 64]"}},
      {"nan_in_norm",
       [](json&, TensorList& t) {
         tensor(t, "model.layers.1.post_attention_layernorm.weight").values[5] = NAN;
       },
       {"model.layers.1.post_attention_layernorm.weight", "not finite", "[5]"}},
      {"inf_in_router",
       [](json&, TensorList& t) {
         tensor(t, "model.layers.1.mlp.gate.weight").values[64 + 3] = INFINITY;
       },
       {"model.layers.1.mlp.gate.weight", "not finite", "[1, 3]"}},
      {"missing_q_b_proj",
       [](json&, TensorList& t) {
         test::erase_tensor(t, "model.layers.0.self_attn.q_b_proj.weight");
       },
       {"model.layers.0.self_attn.q_b_proj.weight", "not found"}},
      {"no_model_type", [](json& c, TensorList&) { c.erase("model_type"); }, {"model_type"}},
      {"other_model_type",
       [](json& c, TensorList&) { c["model_type"] = "llama"; },
       {"model_type", "llama", "does not run"}},
  };
  return cases;
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

// Error from `run`, which must throw, holding every part of the case's message.
void expect_error_naming(const std::function<void()>& run, const std::vector<std::string>& parts) {
  try {
    run();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

void write_spoiled(const fs::path& dir, const BadInput& bad) {
  json config = test::small_config();
  TensorList tensors = test::small_checkpoint_tensors(config);
  bad.spoil(config, tensors);
  test::write_small_checkpoint(dir, config, tensors);
}

ConvertOptions options(const fs::path& from, const fs::path& to) {
  ConvertOptions o;
  o.from = from;
  o.to = to;
  return o;
}

TEST_P(BadInputTest, ConvertRefusesBeforeWritingAnything) {
  const BadInput& bad = GetParam();
  test::ConvertScratch dir(std::string("bad-") + bad.name);
  write_spoiled(dir / "in", bad);
  expect_error_naming([&] { convert_checkpoint(options(dir / "in", dir / "out")); }, bad.message);
  EXPECT_FALSE(fs::exists(dir / "out"));
  EXPECT_FALSE(fs::exists(dir / "out.partial"));
}

// The folder sealed as a container (checksums.json over its shards) as
// convert would have written it had it not refused.
void seal_as_container(const fs::path& dir) {
  json files = json::object();
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors")
      files[e.path().filename().string()] = {{"bytes", fs::file_size(e.path())},
                                             {"xxh3", hash_hex(hash_file(e.path()))}};
  test::write_file_atomically(dir / kChecksumsFile,
                              json{{"hash", "xxh3-64"}, {"files", files}}.dump());
}

TEST_P(BadInputTest, VerifyRefusesTheContainer) {
  const BadInput& bad = GetParam();
  test::ConvertScratch dir(std::string("verify-bad-") + bad.name);
  write_spoiled(dir / "c", bad);
  seal_as_container(dir / "c");
  expect_error_naming([&] { verify_container(dir / "c"); }, bad.message);
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInputTest, ::testing::ValuesIn(bad_inputs()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(BadInput, TheUnspoiledCheckpointConvertsAndVerifies) {
  test::ConvertScratch dir("good");
  const json config = test::small_config();
  test::write_small_checkpoint(dir / "in", config, test::small_checkpoint_tensors(config));
  convert_checkpoint(options(dir / "in", dir / "out"));
  EXPECT_NO_THROW(verify_container(dir / "out"));
  // Sealed as it is, the checkpoint itself is a container verify accepts.
  seal_as_container(dir / "in");
  EXPECT_NO_THROW(verify_container(dir / "in"));
}

// A NaN where loading the resident weights never looks (a routed expert's
// per-group scales) is found by verify's read of every tensor.
TEST(BadInput, VerifyFindsANanInAnExpertsScales) {
  test::ConvertScratch dir("verify-expert-nan");
  const json config = test::small_config();
  test::write_small_checkpoint(dir / "in", config, test::small_checkpoint_tensors(config));
  convert_checkpoint(options(dir / "in", dir / "out"));
  const std::string name = "model.layers.1.mlp.experts.1.down_proj.weight.gqs";
  fs::path file;
  uint64_t offset = 0;
  {
    const TensorDirectory t = TensorDirectory::open(dir / "out");
    const TensorInfo& scales = t.at(name);
    file = t.files().at(scales.file_index);
    offset = scales.offset + 4 * 9;  // element 9
  }
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset));
    const uint32_t nan = 0x7fc00000u;
    f.write(reinterpret_cast<const char*>(&nan), 4);
  }
  // Damage first: the checksum names the file.
  expect_error_naming([&] { verify_container(dir / "out"); },
                      {file.filename().string(), "damaged"});
  fs::remove(dir / "out" / kChecksumsFile);
  seal_as_container(dir / "out");
  expect_error_naming([&] { verify_container(dir / "out"); }, {name, "not finite"});
}

TEST(BadInput, OrphanFp8BlockScalesAreNamed) {
  test::ConvertScratch dir("orphan-scales");
  const json config = test::small_config();
  TensorList tensors = test::small_checkpoint_tensors(config);
  const std::string orphan = "model.layers.0.self_attn.q_c_proj.weight_scale_inv";
  tensors.push_back({orphan, {1, 1}, {1.f}, test::StoredDType::f32});
  test::write_small_checkpoint(dir / "in", config, tensors);
  expect_error_naming(
      [&] { convert_checkpoint(options(dir / "in", dir / "out")); },
      {orphan, "model.safetensors", "does not hold", "model.layers.0.self_attn.q_c_proj.weight"});
  // Scales of a weight that is not FP8 would be ignored as silently.
  tensors.back().name = "model.layers.0.self_attn.q_b_proj.weight_scale_inv";
  test::write_small_checkpoint(dir / "in2", config, tensors);
  expect_error_naming([&] { convert_checkpoint(options(dir / "in2", dir / "out")); },
                      {"q_b_proj.weight_scale_inv", "BF16", "F8_E4M3"});
  EXPECT_FALSE(fs::exists(dir / "out.partial"));
}

TEST(BadInput, QuantizationConfigMustBeAnObjectOfFp8BlockScales) {
  test::ConvertScratch dir("quantization-config");
  json config = test::small_config();
  const TensorList tensors = test::small_checkpoint_tensors(config);
  for (const json& bad : {json("fp8"), json::array({128, 128}), json(7)}) {
    SCOPED_TRACE(bad.dump());
    config["quantization_config"] = bad;
    test::write_small_checkpoint(dir / "in", config, tensors);
    expect_error_naming([&] { convert_checkpoint(options(dir / "in", dir / "out")); },
                        {"config.json", "quantization_config", "must be an object"});
  }
  config["quantization_config"] = {{"quant_method", "gptq"}};
  test::write_small_checkpoint(dir / "in", config, tensors);
  expect_error_naming([&] { convert_checkpoint(options(dir / "in", dir / "out")); },
                      {"quantization_config.quant_method", "gptq"});
  // FP8 block scales as GLM-5-FP8 declares them are accepted (here without FP8 tensors).
  config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  test::write_small_checkpoint(dir / "in", config, tensors);
  convert_checkpoint(options(dir / "in", dir / "out"));
  EXPECT_NO_THROW(verify_container(dir / "out"));
}

}  // namespace
}  // namespace glmrt::refusals_test
