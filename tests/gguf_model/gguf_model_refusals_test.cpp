// A GGUF that does not hold what its architecture needs is refused before
// anything runs, the message naming the file and the key or tensor.
#include <glmrt/base/error.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/plugin/ggml_types.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "checkpoint_generator.h"
#include "gguf_from_checkpoint.h"
#include "shell_command.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
const fs::path kSource = fs::path(GLMRT_FIXTURES) / "deepseek_v32_tiny";

test::GgufEdits keys(std::function<bool(const std::string&, gguf::Value&)> hook) {
  test::GgufEdits edits;
  edits.key = std::move(hook);
  return edits;
}
test::GgufEdits tensors(std::function<void(std::string&, uint32_t&, std::vector<int64_t>&)> hook) {
  test::GgufEdits edits;
  edits.tensor = std::move(hook);
  return edits;
}
test::GgufEdits extra(std::function<void(gguf::Writer&)> hook) {
  test::GgufEdits edits;
  edits.extra = std::move(hook);
  return edits;
}

class GgufRefusals : public ::testing::Test {
 protected:
  fs::path write(const test::GgufEdits& edits) {
    test::write_gguf_from_checkpoint(kSource, file_, "deepseek32", edits);
    return file_;
  }
  // What opening the model (config, then tensors) throws; "" when it opens.
  std::string open_error(const test::GgufEdits& edits) {
    write(edits);
    try {
      const TensorDirectory tensors = TensorDirectory::open(file_);
      load_model_config(file_, tensors);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  // `glmrt run`'s exit status and output on the edited file.
  std::pair<int, std::string> run(const test::GgufEdits& edits) {
    write(edits);
    return test::run_shell(fmt::format(
        "{}/glmrt run --profile {}/configs/reference.yaml --model {} --prompt-ids 5,6 -n 1 2>&1",
        GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, file_.string()));
  }
  test::ScratchDir dir_{"glmrt-gguf-refusals"};
  fs::path file_ = dir_.path() / "model.gguf";
};

TEST_F(GgufRefusals, MissingKeyNamesFileAndKey) {
  const std::string error = open_error(keys([](const std::string& key, gguf::Value&) {
    return key != "deepseek32.attention.kv_lora_rank";
  }));
  EXPECT_THAT(error, HasSubstr("model.gguf"));
  EXPECT_THAT(error, HasSubstr("deepseek32.attention.kv_lora_rank"));
}

TEST_F(GgufRefusals, MistypedKeyNamesKeyAndType) {
  const std::string error = open_error(keys([](const std::string& key, gguf::Value& value) {
    if (key == "deepseek32.block_count") value = gguf::Value::str("three");
    return true;
  }));
  EXPECT_THAT(error, HasSubstr("deepseek32.block_count"));
  EXPECT_THAT(error, HasSubstr("string"));
}

TEST_F(GgufRefusals, UnknownArchitectureNamed) {
  const std::string error = open_error(keys([](const std::string& key, gguf::Value& value) {
    if (key == "general.architecture") value = gguf::Value::str("llama");
    return !key.starts_with("deepseek32.");
  }));
  EXPECT_THAT(error, HasSubstr("general.architecture"));
  EXPECT_THAT(error, HasSubstr("llama"));
}

TEST_F(GgufRefusals, SoftmaxGatingRefused) {
  const std::string error = open_error(keys([](const std::string& key, gguf::Value& value) {
    if (key == "deepseek32.expert_gating_func") value = gguf::Value::u32(1);
    return true;
  }));
  EXPECT_THAT(error, HasSubstr("deepseek32.expert_gating_func"));
  EXPECT_THAT(error, HasSubstr("sigmoid"));
}

TEST_F(GgufRefusals, UnknownTensorNamed) {
  const std::string error = open_error(extra([](gguf::Writer& w) {
    w.add_tensor("blk.0.attn_sinks.weight", GLMRT_GGML_F32, {4}, std::string(16, '\0'));
  }));
  EXPECT_THAT(error, HasSubstr("blk.0.attn_sinks.weight"));
}

TEST_F(GgufRefusals, TypeHoldingNoWeightsNamed) {
  // An integer type of the same element size: the bytes fit, the type does not.
  const std::string error =
      open_error(tensors([](std::string& name, uint32_t& type, std::vector<int64_t>&) {
        if (name == "output_norm.weight")
          type = type == GLMRT_GGML_F32 ? GLMRT_GGML_I32 : GLMRT_GGML_I16;
      }));
  EXPECT_THAT(error, HasSubstr("output_norm.weight"));
  EXPECT_THAT(error, HasSubstr("holds no weights"));
}

TEST_F(GgufRefusals, ShapeAgainstTheArchitectureNamesTheTensor) {
  // q_a's two dims swapped: the same bytes, the wrong matrix for the config.
  const auto [status, out] =
      run(tensors([](std::string& name, uint32_t&, std::vector<int64_t>& dims) {
        if (name == "blk.1.attn_q_a.weight") std::swap(dims[0], dims[1]);
      }));
  EXPECT_NE(status, 0);
  EXPECT_THAT(out, HasSubstr("model.layers.1.self_attn.q_a_proj.weight"));
  EXPECT_THAT(out, HasSubstr("model.gguf"));
  EXPECT_THAT(out, HasSubstr("the config implies"));
}

TEST_F(GgufRefusals, ExpertShapeAgainstTheArchitectureNamesTheTensor) {
  const auto [status, out] =
      run(tensors([](std::string& name, uint32_t&, std::vector<int64_t>& dims) {
        if (name == "blk.1.ffn_up_exps.weight") std::swap(dims[0], dims[1]);
      }));
  EXPECT_NE(status, 0);
  EXPECT_THAT(out, HasSubstr("model.layers.1.mlp.experts.0.up_proj.weight"));
  EXPECT_THAT(out, HasSubstr("the config implies"));
}

}  // namespace
}  // namespace glmrt
