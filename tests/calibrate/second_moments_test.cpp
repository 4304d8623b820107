// Second moments for error-compensating rounding on glm_tiny: each shared
// statistic's diagonal equals the diagonal statistics of the products that
// read it (so the matrices hold the right rows), they are symmetric, a small
// budget splits the layers over passes without changing a value, a budget
// below one layer is refused, and convert uses them (gptq by default; a
// routed gate/up with too few tokens of its own by the layer's shared
// moments) or falls back to rtn for statistics without them.
#include <glmrt/base/error.h>
#include <glmrt/calibrate/calibrate.h>
#include <glmrt/calibrate/second_moment_collector.h>
#include <glmrt/convert/container_verify.h>
#include <glmrt/convert/convert.h>
#include <glmrt/engine/engine.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

const fs::path kMomentsModel = fs::path(GLMRT_FIXTURES) / "glm_tiny";
constexpr int64_t kMomentTokens = 40;

class MomentScratch {
 public:
  MomentScratch() : dir_(fs::temp_directory_path() / fmt::format("glmrt-moments-{}", ::getpid())) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~MomentScratch() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  fs::path operator/(const std::string& name) const { return dir_ / name; }

 private:
  fs::path dir_;
};

Profile moments_profile() {
  Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
  p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  return p;
}

CalibrationSummary calibrate_tiny(const fs::path& out, uint64_t budget) {
  auto engine = Engine::open(moments_profile(), kMomentsModel);
  std::vector<int32_t> tokens;
  for (int64_t i = 0; i < kMomentTokens; ++i)
    tokens.push_back(static_cast<int32_t>((i * 37 + 11) % engine->model().config().vocab_size));
  CalibrationOptions o;
  o.window = 16;
  o.moments_budget_bytes = budget;
  return calibrate_to_file(
      engine->model(), [&] { return engine->new_cache(); }, tokens, o, out);
}

// H's diagonal over its rows against the mean x^2 of `weight`.
void expect_diagonal_matches(const ImportanceTable& t, const std::string& weight,
                             const std::string& tensor) {
  const auto* ref = t.find_moments(weight);
  ASSERT_NE(ref, nullptr) << weight;
  EXPECT_EQ(ref->tensor, tensor) << weight;
  const auto h = t.read_moments(*ref);
  const auto mean = t.find(weight);
  ASSERT_EQ(std::ssize(mean), ref->cols) << weight;
  for (int64_t i = 0; i < ref->cols; ++i) {
    const double got = h[i * ref->cols + i] / static_cast<double>(ref->rows);
    EXPECT_NEAR(got, mean[i], 1e-4 * mean[i] + 1e-9) << weight << " channel " << i;
    for (int64_t j = 0; j < i; ++j) ASSERT_EQ(h[i * ref->cols + j], h[j * ref->cols + i]);
  }
}

TEST(SecondMoments, DiagonalsEqualTheStatisticsOfTheProductsThatReadThem) {
  MomentScratch dir;
  const CalibrationSummary s = calibrate_tiny(dir / "m.safetensors", 2ull << 30);
  EXPECT_EQ(s.passes, 1);
  EXPECT_GT(s.moments, 0);
  const ImportanceTable t = read_importance_file(dir / "m.safetensors");
  EXPECT_EQ(t.version, 2);
  const std::string attn = "moment.model.layers.0.input_layernorm";
  expect_diagonal_matches(t, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight", attn);
  expect_diagonal_matches(t, "model.layers.0.self_attn.q_a_proj.weight", attn);
  EXPECT_EQ(t.find_moments("model.layers.0.self_attn.q_a_proj.weight")->rows, kMomentTokens);
  expect_diagonal_matches(t, "model.layers.1.mlp.shared_experts.gate_proj.weight",
                          "moment.model.layers.1.post_attention_layernorm");
  // A routed expert's gate and up read one statistic of their own and its
  // down_proj another, each over the tokens routed to it; gate and up fall
  // back on the layer's shared one (every token).
  bool routed = false;
  for (const auto& [weight, entry] : t.entries) {
    if (weight.find(".mlp.experts.") == std::string::npos || !weight.starts_with("model.layers.1."))
      continue;
    if (weight.ends_with("gate_proj.weight") || weight.ends_with("up_proj.weight")) {
      const std::string expert = weight.substr(0, weight.rfind('.', weight.size() - 8));
      expect_diagonal_matches(t, weight, "moment." + expert + ".gate_up_proj");
      EXPECT_EQ(t.find_moments(weight)->rows, entry.rows) << weight;
      const auto* shared = t.find_fallback_moments(weight);
      ASSERT_NE(shared, nullptr) << weight;
      EXPECT_EQ(shared->tensor, "moment.model.layers.1.post_attention_layernorm") << weight;
      EXPECT_EQ(shared->rows, kMomentTokens) << weight;
    }
    if (weight.ends_with("down_proj.weight")) {
      expect_diagonal_matches(t, weight, "moment." + weight);
      EXPECT_EQ(t.find_moments(weight)->rows, entry.rows);
      EXPECT_EQ(t.find_fallback_moments(weight), nullptr) << weight;
      routed = true;
    }
  }
  EXPECT_TRUE(routed);
}

TEST(SecondMoments, ASmallBudgetTakesMorePassesAndChangesNoValue) {
  MomentScratch dir;
  calibrate_tiny(dir / "one.safetensors", 2ull << 30);
  // About one layer's matrices at a time (a MoE layer of glm_tiny: ~400 KB,
  // 16 experts' own gate/up and down moments among them).
  const CalibrationSummary s = calibrate_tiny(dir / "many.safetensors", 600u << 10);
  EXPECT_GT(s.passes, 2);
  const ImportanceTable one = read_importance_file(dir / "one.safetensors");
  const ImportanceTable many = read_importance_file(dir / "many.safetensors");
  ASSERT_EQ(one.moments.size(), many.moments.size());
  for (const auto& [weight, ref] : one.moments) {
    const auto* other = many.find_moments(weight);
    ASSERT_NE(other, nullptr) << weight;
    EXPECT_EQ(one.read_moments(ref), many.read_moments(*other)) << weight;
  }
  ASSERT_EQ(one.fallback_moments.size(), many.fallback_moments.size());
  for (const auto& [weight, ref] : one.fallback_moments) {
    const auto* other = many.find_fallback_moments(weight);
    ASSERT_NE(other, nullptr) << weight;
    EXPECT_EQ(one.read_moments(ref), many.read_moments(*other)) << weight;
  }
}

TEST(SecondMoments, ALayerTooLargeForTheBudgetLeavesOutTheExpertsGateUpFirst) {
  MomentScratch dir;
  // A MoE layer's own gate/up moments (16 experts x 64^2) do not fit 300 KB
  // with the rest of the layer; without them it does (so does 350 KB; at
  // 200 KB the down_proj moments go too): they are left out (gate/up fall
  // back on the layer's shared moments), down_proj kept.
  calibrate_tiny(dir / "m.safetensors", 300u << 10);
  const ImportanceTable t = read_importance_file(dir / "m.safetensors");
  int gate_up = 0, down = 0;
  for (const auto& [weight, entry] : t.entries) {
    if (weight.find(".mlp.experts.") == std::string::npos) continue;
    if (weight.ends_with("down_proj.weight")) {
      EXPECT_NE(t.find_moments(weight), nullptr) << weight;
      ++down;
    } else {
      EXPECT_EQ(t.find_moments(weight), nullptr) << weight;
      ASSERT_NE(t.find_fallback_moments(weight), nullptr) << weight;
      EXPECT_TRUE(t.find_fallback_moments(weight)->tensor.ends_with(".post_attention_layernorm"));
      ++gate_up;
    }
  }
  EXPECT_GT(down, 0);
  EXPECT_EQ(gate_up, 2 * down);
}

TEST(SecondMoments, ABudgetBelowOneMatrixIsRefused) {
  MomentScratch dir;
  try {
    calibrate_tiny(dir / "never.safetensors", 1024);
    ADD_FAILURE() << "a 1 KB budget was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("raise it"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "never.safetensors"));
}

TEST(SecondMoments, ConvertUsesThemAndFallsBackToRtnWithoutThem) {
  MomentScratch dir;
  calibrate_tiny(dir / "m.safetensors", 2ull << 30);
  ConvertOptions o;
  o.from = kMomentsModel;
  o.experts = WeightPrecision::two_level_of(WeightBits::int3);
  o.dense = WeightPrecision{WeightBits::int4, 16};
  o.importance = dir / "m.safetensors";
  o.to = dir / "gptq";
  const ConvertResult g = convert_checkpoint(o);
  EXPECT_EQ(g.method, QuantMethod::gptq);
  EXPECT_GT(g.gptq_matrices, 0);
  EXPECT_GT(g.gptq_factors, 0);
  verify_container(dir / "gptq");
  // A routed gate/up whose own moments are thin takes the layer's shared
  // ones: at 0.5 rows per column the shared ones (40 rows of 64 inputs) are
  // enough, an expert's own (the tokens routed to it) are not; at 0 every
  // matrix uses its own.
  o.gptq_min_rows_per_col = 0.5;
  o.to = dir / "gptq-shared";
  const ConvertResult shared = convert_checkpoint(o);
  EXPECT_GT(shared.gptq_shared_matrices, 0);
  EXPECT_GT(shared.gptq_matrices, g.gptq_matrices);
  o.gptq_min_rows_per_col = 0;
  o.to = dir / "gptq-own";
  EXPECT_EQ(convert_checkpoint(o).gptq_shared_matrices, 0);
  o.gptq_min_rows_per_col = ConvertOptions{}.gptq_min_rows_per_col;
  // Diagonal statistics only (an older file): rtn.
  write_importance_file(dir / "v1.safetensors", read_importance_file(dir / "m.safetensors"));
  o.importance = dir / "v1.safetensors";
  o.to = dir / "rtn";
  EXPECT_EQ(convert_checkpoint(o).method, QuantMethod::rtn);
  o.importance.clear();
  o.method = QuantMethod::gptq;
  o.to = dir / "refused";
  EXPECT_THROW(convert_checkpoint(o), Error);
}

}  // namespace
}  // namespace glmrt
