// glmrt calibrate on glm_tiny: the first layer's statistics equal a direct
// double-precision computation from the checkpoint, every kind of product is
// covered (dense, kv_b's latent, each routed expert over the tokens routed to
// it, the MTP layer, lm_head), and weighting the scale search with the
// statistics lowers the weighted error of converted matrices.
#include <glmrt/base/error.h>
#include <glmrt/calibrate/calibrate.h>
#include <glmrt/convert/container_verify.h>
#include <glmrt/convert/convert.h>
#include <glmrt/engine/engine.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "checkpoint_generator.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;

const fs::path kTinyModel = fs::path(GLMRT_FIXTURES) / "glm_tiny";
constexpr int64_t kTokens = 40, kWindow = 16;  // windows of 16, 16 and 8

Profile f32_profile() {
  Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
  p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  return p;
}

std::vector<int32_t> calibration_tokens(int64_t vocab) {
  std::vector<int32_t> t;
  for (int64_t i = 0; i < kTokens; ++i) t.push_back(static_cast<int32_t>((i * 37 + 11) % vocab));
  return t;
}

// One calibration of glm_tiny shared by the tests (it is deterministic).
const ImportanceTable& tiny_statistics() {
  static const ImportanceTable table = [] {
    auto engine = Engine::open(f32_profile(), kTinyModel);
    CalibrationOptions o;
    o.window = kWindow;
    return calibrate(
        engine->model(), [&] { return engine->new_cache(); },
        calibration_tokens(engine->model().config().vocab_size), o);
  }();
  return table;
}

const test::TensorList& tiny_weights() {
  static const test::TensorList w = test::read_checkpoint_tensors(kTinyModel);
  return w;
}

const test::HostTensor& weight(const std::string& name) {
  const test::HostTensor* t = test::find_tensor(tiny_weights(), name);
  if (!t) throw std::runtime_error("glm_tiny lacks " + name);
  return *t;
}

TEST(Calibrate, FirstLayerInputStatisticsEqualADirectComputation) {
  const ImportanceTable& table = tiny_statistics();
  // Layer 0's attention input: input_layernorm(embed(token)), in double.
  const test::HostTensor& embed = weight("model.embed_tokens.weight");
  const test::HostTensor& norm = weight("model.layers.0.input_layernorm.weight");
  const int64_t D = embed.shape[1];
  std::vector<double> expected(static_cast<size_t>(D), 0.0);
  for (int32_t token : calibration_tokens(embed.shape[0])) {
    const float* x = embed.values.data() + token * D;
    double ss = 0;
    for (int64_t i = 0; i < D; ++i) ss += double(x[i]) * x[i];
    const double inv = 1.0 / std::sqrt(ss / double(D) + 1e-5);
    for (int64_t i = 0; i < D; ++i) {
      const double y = x[i] * inv * norm.values[i];
      expected[i] += y * y / kTokens;
    }
  }
  const auto got = table.find("model.layers.0.self_attn.q_a_proj.weight");
  ASSERT_EQ(std::ssize(got), D);
  for (int64_t i = 0; i < D; ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-4 * expected[i] + 1e-9) << "channel " << i;
  EXPECT_EQ(table.entries.at("model.layers.0.self_attn.q_a_proj.weight").rows, kTokens);
  // kv_a reads the same rows: the same statistics, bit for bit.
  const auto kv_a = table.find("model.layers.0.self_attn.kv_a_proj_with_mqa.weight");
  EXPECT_TRUE(std::equal(got.begin(), got.end(), kv_a.begin(), kv_a.end()));
}

TEST(Calibrate, CoversEveryKindOfProduct) {
  const ImportanceTable& table = tiny_statistics();
  auto engine = Engine::open(f32_profile(), kTinyModel);
  const ModelConfig& c = engine->model().config();
  EXPECT_EQ(table.tokens, kTokens);
  const auto rows = [&](const std::string& name) {
    const auto it = table.entries.find(name);
    return it == table.entries.end() ? int64_t{-1} : it->second.rows;
  };
  const auto cols = [&](const std::string& name) { return std::ssize(table.find(name)); };
  EXPECT_EQ(rows("lm_head.weight"), kTokens);
  EXPECT_EQ(rows("model.layers.0.self_attn.indexer.wq_b.weight"), kTokens);
  EXPECT_EQ(cols("model.layers.0.self_attn.indexer.wq_b.weight"), c.q_lora_rank);
  EXPECT_EQ(rows("model.layers.0.mlp.down_proj.weight"), kTokens);  // dense layer
  EXPECT_EQ(cols("model.layers.0.mlp.down_proj.weight"), c.intermediate_size);
  EXPECT_EQ(cols("model.layers.1.self_attn.kv_b_proj.weight"), c.kv_lora_rank);
  EXPECT_EQ(rows("model.layers.1.mlp.shared_experts.up_proj.weight"), kTokens);
  // Each position is routed to num_experts_per_tok experts of each MoE layer:
  // the experts' rows add up to that, and only tokens routed count.
  const int mtp = c.num_hidden_layers;
  for (int layer : {1, mtp}) {
    int64_t routed = 0;
    int used = 0;
    for (int e = 0; e < c.n_routed_experts; ++e) {
      const std::string base = fmt::format("model.layers.{}.mlp.experts.{}.", layer, e);
      const int64_t n = rows(base + "gate_proj.weight");
      if (n < 0) continue;
      ++used;
      routed += n;
      EXPECT_EQ(rows(base + "down_proj.weight"), n);
      EXPECT_EQ(cols(base + "down_proj.weight"), c.moe_intermediate_size);
    }
    // The MTP layer sees every position of a window but its last.
    const int64_t positions = layer == mtp ? kTokens - 3 : kTokens;
    EXPECT_EQ(routed, positions * c.num_experts_per_tok) << "layer " << layer;
    EXPECT_GT(used, 1) << "layer " << layer;
  }
  EXPECT_EQ(rows(fmt::format("model.layers.{}.eh_proj.weight", mtp)), kTokens - 3);
  EXPECT_EQ(cols(fmt::format("model.layers.{}.eh_proj.weight", mtp)), 2 * c.hidden_size);
}

double weighted_error(const test::HostTensor& w, std::span<const float> a, int64_t group,
                      bool use_importance) {
  const int64_t rows = w.shape[0], cols = w.shape[1];
  double e = 0;
  std::vector<int8_t> q(static_cast<size_t>(group));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < cols; g += group) {
      const auto values = std::span(w.values).subspan(static_cast<size_t>(r * cols + g), group);
      const auto imp = a.subspan(static_cast<size_t>(g), static_cast<size_t>(group));
      const float s = quantize_group_searched(
          values, use_importance ? imp : std::span<const float>(), GLMRT_I4, q.data());
      for (int64_t i = 0; i < group; ++i) {
        const double d = values[i] - double(q[i]) * s;
        e += imp[i] * d * d;
      }
    }
  return e;
}

TEST(Calibrate, ImportanceLowersTheWeightedErrorOfInt4Groups) {
  const ImportanceTable& table = tiny_statistics();
  for (const std::string name :
       {"model.layers.0.mlp.down_proj.weight", "model.layers.1.self_attn.q_b_proj.weight",
        "model.layers.1.mlp.experts.0.down_proj.weight", "lm_head.weight"}) {
    const auto a = table.find(name);
    ASSERT_FALSE(a.empty()) << name;
    const double with = weighted_error(weight(name), a, 16, true);
    const double without = weighted_error(weight(name), a, 16, false);
    EXPECT_LT(with, without) << name;
  }
}

TEST(Calibrate, ConvertWeightsTheSearchAndRefusesStatisticsOfAnotherShape) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("glmrt-calibrate-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_importance_file(dir / "stats.safetensors", tiny_statistics());
  ConvertOptions o;
  o.from = kTinyModel;
  o.experts = o.dense = WeightPrecision{WeightBits::int4, 16};
  o.to = dir / "plain";
  convert_checkpoint(o);
  o.to = dir / "weighted";
  o.importance = dir / "stats.safetensors";
  convert_checkpoint(o);
  verify_container(dir / "weighted");
  const auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // The statistics change the chosen scales (checksums of the shards).
  EXPECT_NE(bytes(dir / "plain" / "checksums.json"), bytes(dir / "weighted" / "checksums.json"));

  ImportanceTable wrong = tiny_statistics();
  wrong.entries["model.layers.0.mlp.down_proj.weight"].mean_square.resize(3);
  write_importance_file(dir / "wrong.safetensors", wrong);
  o.to = dir / "refused";
  o.importance = dir / "wrong.safetensors";
  try {
    convert_checkpoint(o);
    ADD_FAILURE() << "statistics of 3 columns were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "wrong.safetensors").string()), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("model.layers.0.mlp.down_proj.weight holds 3 values"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "refused"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace glmrt
