// Precision `stored` (configs/gguf.yaml): a GGUF's weights stay the file's
// ggml blocks, byte for byte, in the resident part and in the memory plan's
// expert slots; a kernels plugin that cannot multiply a stored type is
// refused before loading, naming the tensor, the type and the plugin.
#include <glmrt/memory/memory_estimates.h>
#include <glmrt/model/model_weights.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/stored_matrix.h>
#include <glmrt/weights/tensor_loader.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "shell_command.h"

namespace glmrt {
namespace stored_weights_test {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kGguf = fs::path(GLMRT_FIXTURES) / "gguf" / "glm_dsa-Q4_K_M.gguf";

Profile stored_profile() {
  Profile p;
  p.dense_bits = WeightPrecision::as_stored();
  p.expert_bits = WeightPrecision::as_stored();
  return p;
}

std::vector<std::byte> file_bytes(const TensorDirectory& dir, const TensorInfo& t) {
  std::vector<std::byte> raw(t.byte_size);
  dir.read_raw(t, raw);
  return raw;
}

void expect_kept(const TensorDirectory& dir, const Matrix& m, const std::string& name) {
  const TensorInfo& t = dir.at(name);
  ASSERT_EQ(static_cast<int>(m.element_type()), kept_element_type(t)) << name;
  const auto raw = file_bytes(dir, t);
  const glmrt_weight_view v = m.view();
  ASSERT_EQ(static_cast<uint64_t>(v.row_stride_bytes * v.rows), raw.size()) << name;
  EXPECT_EQ(std::memcmp(v.data, raw.data(), raw.size()), 0) << name;
}

TEST(StoredWeights, DenseWeightsHoldTheFilesBlocksAsTheyAre) {
  const TensorDirectory dir = TensorDirectory::open(kGguf);
  const ModelConfig config = load_model_config(kGguf, dir);
  TensorLoader loader(dir, nullptr);
  const ModelWeights w = load_model_weights(config, loader, stored_profile());
  EXPECT_TRUE(loader.summary().requantized.empty());
  int ggml_blocks = 0;
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    const LayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = fmt::format("model.layers.{}.", i);
    expect_kept(dir, l.attention.q_a, p + "self_attn.q_a_proj.weight");
    expect_kept(dir, l.attention.kv_a, p + "self_attn.kv_a_proj_with_mqa.weight");
    expect_kept(dir, l.attention.key_absorb, p + "self_attn.kv_b_proj.key_absorb");
    expect_kept(dir, l.attention.o, p + "self_attn.o_proj.weight");
    const FeedForwardWeights& ff = l.mlp_kind == MlpKind::dense ? l.dense : l.moe.shared;
    const std::string mlp = l.mlp_kind == MlpKind::dense ? "mlp." : "mlp.shared_experts.";
    expect_kept(dir, ff.down, p + mlp + "down_proj.weight");
    // What decides discrete choices stays f32: the router, the indexer's head weights.
    if (l.mlp_kind == MlpKind::sparse) {
      EXPECT_EQ(l.moe.router.element_type(), GLMRT_F32);
    }
    if (l.attention.indexer) {
      EXPECT_EQ(l.attention.indexer->weights_proj.element_type(), GLMRT_F32);
      EXPECT_EQ(l.attention.indexer->wk.element_type(), GLMRT_F32);  // widened (DSA choices)
    }
    ggml_blocks += plugin::is_ggml_blocks(l.attention.o.element_type());
  }
  expect_kept(dir, w.embed, "model.embed_tokens.weight");
  EXPECT_GT(ggml_blocks, 0);
  // The embedding lookup dequantizes a row of blocks as ggml does.
  std::vector<float> row(static_cast<size_t>(config.hidden_size)), expected(row.size());
  w.embed.dequantize_row(7, row);
  const TensorInfo& e = dir.at("model.embed_tokens.weight");
  const std::vector<std::byte> table = file_bytes(dir, e);
  decode_stored_row(e,
                    std::span(table).subspan(static_cast<size_t>(7 * e.row_bytes()),
                                             static_cast<size_t>(e.row_bytes())),
                    expected);
  EXPECT_EQ(row, expected);
}

TEST(StoredWeights, MemoryPlanCountsTheStoredBytes) {
  const TensorDirectory dir = TensorDirectory::open(kGguf);
  const ModelConfig config = load_model_config(kGguf, dir);
  Profile f32;
  const uint64_t kept = resident_weight_bytes(stored_profile(), config, dir);
  const uint64_t widened = resident_weight_bytes(f32, config, dir);
  EXPECT_LT(kept * 3, widened) << kept << " vs " << widened;  // Q4_K..Q8_0 against f32
  // An expert slot holds its three matrices as the file stores them.
  const auto layouts = plan_expert_layouts(config, dir, config.num_hidden_layers + 1);
  uint64_t largest = 0;
  for (const auto& layer : layouts)
    for (const ExpertLayout& e : layer) {
      uint64_t bytes = 0;
      for (const ExpertTensorPlace& t : e.tensors) bytes += t.values->byte_size;
      largest = std::max(largest, bytes);
    }
  EXPECT_EQ(largest_expert(layouts, WeightPrecision::as_stored()).in_memory, largest);
  bool q4_k = false;
  for (const UsedWeightFormat& f : weight_formats_in_use(stored_profile(), config, dir, layouts))
    q4_k |= f.name() == "q4_k";
  EXPECT_TRUE(q4_k);
}

TEST(StoredWeights, ProfileCheckPrintsTheStoredResidentSize) {
  const auto [status, out] =
      test::run_shell(fmt::format("{}/glmrt profile check {}/configs/gguf.yaml --model {} 2>&1",
                                  GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, kGguf.string()));
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, AllOf(HasSubstr("precision: dense stored, experts stored"),
                         HasSubstr("each weight as stored")));
}

TEST(StoredWeights, APluginThatCannotMultiplyAStoredTypeIsRefusedNamingTheTensor) {
  test::ScratchDir scratch("glmrt-stored-refusal");
  const fs::path profile = scratch.path() / "stored-f32-only.yaml";
  std::ofstream(profile) << fmt::format(
      "plugin_paths: [{}]\nplugins:\n  kernels: test-f32-only\n  io: io-buffered\n"
      "precision:\n  dense: stored\n  experts: stored\nmemory:\n  history: off\n",
      GLMRT_F32_ONLY_PLUGIN_DIR);
  const auto [status, out] =
      test::run_shell(fmt::format("{}/glmrt run --profile {} --model {} --prompt-ids 5,6 -n 1 2>&1",
                                  GLMRT_BUILD_DIR, profile.string(), kGguf.string()));
  EXPECT_NE(status, 0) << out;
  // The file's lm_head is Q6_K: the first stored type the plugin cannot run.
  EXPECT_THAT(out, AllOf(HasSubstr("kernels plugin `test-f32-only`"),
                         HasSubstr("does not support q6_k weights"), HasSubstr("(lm_head.weight)"),
                         HasSubstr("nothing was loaded")));
}

TEST(StoredWeights, ExpertsStreamedAtTheirTypeValidateAsPinnedOnes) {
  // Two LRU slots and no pinned set: experts are read (O_DIRECT) on misses
  // and ahead, straight into their slots as the file's blocks.
  test::ScratchDir scratch("glmrt-stored-streamed");
  const fs::path profile = scratch.path() / "streamed.yaml";
  std::ofstream(profile) << "plugins:\n  kernels: kernels-avx2\n  io: io-odirect\n"
                            "precision:\n  dense: stored\n  experts: stored\n"
                            "memory:\n  expert_cache: 2\n  pinned: 0\n  history: off\n"
                            "validate:\n  min_top1: 0.6\n  max_kl: 0.25\n  max_dlogit: 10\n"
                            "  greedy_identical: false\n";
  const fs::path ref = fs::path(GLMRT_FIXTURES) / "gguf" / "glm_dsa-ref-Q4_K_M.json";
  const auto [status, out] =
      test::run_shell(fmt::format("{}/glmrt validate --profile {} --model {} --ref {} 2>&1",
                                  GLMRT_BUILD_DIR, profile.string(), kGguf.string(), ref.string()));
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, AllOf(HasSubstr("0 pinned hits"), HasSubstr("overall: PASS")));
  EXPECT_THAT(out, Not(HasSubstr(" 0 misses"))) << out;
}

// A copy of the fixture whose tensor `name` has its first block's f16 scale
// (Q4_K: d, the block's first two bytes) set to NaN.
fs::path with_nan_scale(const fs::path& folder, const std::string& name) {
  const fs::path copy = folder / "nan-scale.gguf";
  fs::copy_file(kGguf, copy);
  const TensorDirectory dir = TensorDirectory::open(kGguf);
  const TensorInfo& t = dir.at(name);
  EXPECT_EQ(t.ggml_type, GLMRT_GGML_Q4_K) << name;
  std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(t.offset));
  const char nan_f16[2] = {0x00, 0x7e};
  f.write(nan_f16, 2);
  return copy;
}

TEST(StoredWeights, BlocksWhoseScaleIsNaNAreRefusedNamingTheTensor) {
  for (const std::string name : {"model.layers.0.self_attn.q_a_proj.weight",
                                 "model.layers.1.mlp.experts.0.gate_proj.weight"}) {
    test::ScratchDir scratch("glmrt-stored-nan");
    const fs::path model = with_nan_scale(scratch.path(), name);
    const auto [status, out] = test::run_shell(fmt::format(
        "{}/glmrt run --profile {}/configs/gguf.yaml --model {} --prompt-ids 5,6 -n 1 2>&1",
        GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, model.string()));
    EXPECT_NE(status, 0) << out;
    EXPECT_THAT(out,
                AllOf(HasSubstr(name), HasSubstr("Q4_K blocks of row 0"), HasSubstr("not finite")));
  }
}

TEST(StoredWeights, AWeightNoElementTypeHoldsIsRefusedNamingIt) {
  TensorInfo f64;
  f64.name = "model.layers.0.mlp.down_proj.weight";
  f64.dtype = DType::F64;
  EXPECT_EQ(kept_element_type(f64), -1);
  TensorInfo q4k;
  q4k.dtype = DType::GGML;
  q4k.ggml_type = GLMRT_GGML_Q4_K;
  EXPECT_EQ(kept_element_type(q4k), static_cast<int>(plugin::ggml_element_type(GLMRT_GGML_Q4_K)));
}

}  // namespace stored_weights_test
}  // namespace glmrt
