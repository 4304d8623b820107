// A container made from a checkpoint loads like that checkpoint: snapped to
// the quantization grid, the checkpoint quantized on the fly and its container
// twin give bit-identical logits (main and MTP), in the seed program's layout
// (sharded, experts' matrices adjacent, a layer's scales together) and in
// glmrt's (one file, header padded, gaps, each expert one aligned extent),
// int8 kv_b_proj and int2 included; and a container of glm_tiny validates
// under configs/nvme.yaml.
#include <glmrt/experts/expert_layout.h>
#include <glmrt/plugin/weight_format.h>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include "shell_command.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "checkpoint_generator.h"
#include "container_twin.h"
#include "variant_harness.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::ContainerLayout;
using test::ContainerSpec;

Profile profile_at(WeightBits dense, WeightBits experts) {
  Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
  p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  p.dense_bits = dense;
  p.expert_bits = experts;
  return p;
}

// Main logits at every position of `tokens`, then MTP logits for the
// positions that have a next token.
std::vector<float> all_logits(Engine& engine, const std::vector<int32_t>& tokens) {
  Model& model = engine.model();
  KvCache cache = engine.new_cache();
  const int64_t T = static_cast<int64_t>(tokens.size());
  const std::vector<float> hidden = model.forward(cache, tokens);
  std::vector<float> out = model.logits(hidden, T);
  const std::vector<int32_t> next(tokens.begin() + 1, tokens.end());
  const std::vector<float> mtp_hidden = model.mtp_forward(cache, next, hidden);
  const std::vector<float> mtp = model.mtp_logits(mtp_hidden, T - 1);
  out.insert(out.end(), mtp.begin(), mtp.end());
  return out;
}

// Past index_topk (6): DSA selections are part of what is compared.
const std::vector<int32_t> kTokens = {3, 17, 42, 99, 7, 250, 31, 64, 128, 5, 77};

class ContainerTwin : public ::testing::Test {
 protected:
  /// Writes the snapped checkpoint and its container; returns the logits of both.
  std::pair<std::vector<float>, std::vector<float>> both(const ContainerSpec& spec,
                                                         const Profile& profile) {
    const nlohmann::json config = test::base_variant_config();
    test::TensorList tensors = test::make_checkpoint_tensors({config, 11});
    test::snap_to_quantization_grid(tensors, spec);
    test::write_checkpoint(checkpoint_dir(), config, tensors, 1);
    test::write_container(container_dir(), config, tensors, spec);
    const TensorDirectory container = TensorDirectory::open(container_dir());
    const TensorInfo& kv_b = container.at("model.layers.1.self_attn.kv_b_proj.weight");
    EXPECT_EQ(kv_b.dtype, DType::U8);  // the twin really is pre-quantized
    EXPECT_TRUE(container.contains(kv_b.name + ".qs"));
    auto from_checkpoint = Engine::open(profile, checkpoint_dir());
    auto from_container = Engine::open(profile, container_dir());
    return {all_logits(*from_checkpoint, kTokens), all_logits(*from_container, kTokens)};
  }
  fs::path checkpoint_dir() const { return scratch_.path() / "checkpoint"; }
  fs::path container_dir() const { return scratch_.path() / "container"; }

  test::ScratchDir scratch_{"glmrt-container"};
};

TEST_F(ContainerTwin, SeedLayoutShardedLoadsBitIdenticalToOnTheFlyInt8Int4) {
  ContainerSpec spec;
  spec.layout = ContainerLayout::seed;
  spec.shards = 3;
  const auto [expected, got] = both(spec, profile_at(WeightBits::int8, WeightBits::int4));
  EXPECT_TRUE(std::filesystem::exists(container_dir() / "model.safetensors.index.json"));
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_EQ(got, expected);
}

TEST_F(ContainerTwin, AlignedLayoutSingleFileLoadsBitIdenticalToOnTheFlyInt8Int4) {
  ContainerSpec spec;
  spec.layout = ContainerLayout::aligned_experts;
  const auto [expected, got] = both(spec, profile_at(WeightBits::int8, WeightBits::int4));
  EXPECT_TRUE(std::filesystem::exists(container_dir() / "model.safetensors"));
  EXPECT_EQ(got, expected);
}

TEST_F(ContainerTwin, Int2LoadsBitIdenticalToOnTheFlyInt2) {
  ContainerSpec spec;
  spec.dense_type = GLMRT_I2;
  spec.expert_type = GLMRT_I2;
  const auto [expected, got] = both(spec, profile_at(WeightBits::int2, WeightBits::int2));
  EXPECT_EQ(got, expected);
}

TEST_F(ContainerTwin, F32ProfileDequantizesEveryDenseMatrixIncludingKvB) {
  ContainerSpec spec;  // dense int8 (kv_b_proj included); experts stay F32
  spec.quantize_experts = false;
  const auto [expected, got] = both(spec, profile_at(WeightBits::f32, WeightBits::f32));
  EXPECT_EQ(got, expected);
}

// Each expert is one extent in glmrt's layout (matrices and scales
// contiguous, 4096-aligned) and two in the seed's (matrices; scales).
TEST_F(ContainerTwin, ExpertExtentsFollowTheLayout) {
  const nlohmann::json config = test::base_variant_config();
  const test::TensorList tensors = test::make_checkpoint_tensors({config, 11});
  for (const auto layout : {ContainerLayout::aligned_experts, ContainerLayout::seed}) {
    const fs::path dir = scratch_.path() / (layout == ContainerLayout::seed ? "seed" : "aligned");
    ContainerSpec spec;
    spec.layout = layout;
    test::write_container(dir, config, tensors, spec);
    const TensorDirectory files = TensorDirectory::open(dir);
    const ModelConfig c = load_model_config(dir);
    const auto layouts = plan_expert_layouts(c, files, c.num_hidden_layers + 1);
    int experts = 0;
    for (const auto& layer : layouts)
      for (const ExpertLayout& e : layer) {
        ++experts;
        ASSERT_EQ(e.extents.size(), layout == ContainerLayout::seed ? 2u : 1u);
        EXPECT_EQ(e.extents.front().offset % 4096, 0u);
        EXPECT_EQ(e.tensors[0].packed_type, GLMRT_I4);
      }
    EXPECT_EQ(experts, 4 * 12);  // 3 sparse layers + MTP, 12 experts each
  }
}

// Through io-odirect (reads widened to 4096 and merged when they touch), an
// expert of glmrt's layout is one read into its slot and an expert of the
// seed's at most two; the logits are those of io-buffered.
TEST_F(ContainerTwin, IoOdirectReadsEachExpertInOneReadWhenContiguous) {
  const nlohmann::json config = test::base_variant_config();
  const test::TensorList tensors = test::make_checkpoint_tensors({config, 11});
  for (const auto layout : {ContainerLayout::aligned_experts, ContainerLayout::seed}) {
    const fs::path dir = scratch_.path() / (layout == ContainerLayout::seed ? "seed" : "aligned");
    ContainerSpec spec;
    spec.layout = layout;
    test::write_container(dir, config, tensors, spec);
    Profile profile = profile_at(WeightBits::int8, WeightBits::int4);
    profile.prefetch_slots = 0;  // every read is a step's own
    // Nor pinned: the checkpoint is the same bytes every run, so a history
    // an earlier ctest run left in the test cache folder would pin its
    // experts at open and leave no misses to count.
    profile.history = false;
    auto buffered = Engine::open(profile, dir);
    profile.io = {"io-odirect", {}, {}};
    auto direct = Engine::open(profile, dir);
    EXPECT_EQ(all_logits(*direct, kTokens), all_logits(*buffered, kTokens));
    const ExpertStoreStats& stats = direct->experts().stats();
    ASSERT_GT(stats.misses, 0u);
    if (layout == ContainerLayout::aligned_experts) {
      EXPECT_EQ(stats.extents_read, stats.misses);
    } else {  // matrices, then scales (merged with them when they fall within a block)
      EXPECT_GT(stats.extents_read, stats.misses);
      EXPECT_LE(stats.extents_read, 2 * stats.misses);
    }
  }
}

// glm_tiny as the seed program would store it (int8 dense incl. kv_b_proj,
// embed_tokens and lm_head; int4 experts), validated against the oracle at
// configs/nvme.yaml's thresholds.
TEST(GlmTinyContainer, ValidatesWithTheNvmeProfile) {
  const fs::path tiny = fs::path(GLMRT_FIXTURES) / "glm_tiny";
  test::ScratchDir scratch("glmrt-tiny-container");
  ContainerSpec spec;
  spec.quantize_boundary = true;
  std::ifstream config_file(tiny / "config.json");
  test::write_container(scratch.path(), nlohmann::json::parse(config_file),
                        test::read_checkpoint_tensors(tiny), spec);
  const auto [status, out] = test::run_shell(fmt::format(
      "{}/glmrt validate --profile {}/configs/nvme.yaml --model {} --ref {} 2>&1", GLMRT_BUILD_DIR,
      GLMRT_SOURCE_DIR, scratch.path().string(), (tiny / "ref.json").string()));
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("overall: PASS"), std::string::npos) << out;
}

}  // namespace
}  // namespace glmrt
