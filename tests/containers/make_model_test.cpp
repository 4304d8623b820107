// glmrt make-model: the tiny preset loads and runs with finite, spread
// logits; the layout is the seed program's (experts 4096-aligned with their
// matrices adjacent, scales of a layer together, every tensor stamped); the
// same seed writes the same bytes whatever the write regions; --hot-skew
// biases the router; a destination in use is refused before anything is written.
#include <glmrt/base/error.h>
#include <glmrt/engine/engine.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/model_maker/make_model.h>
#include <glmrt/model_maker/model_plan.h>
#include <glmrt/model_maker/planned_file_writer.h>
#include <glmrt/model_maker/presets.h>
#include <glmrt/plugin/weight_format.h>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include "shell_command.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "checkpoint_generator.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;

std::string file_bytes(const fs::path& file) {
  std::stringstream s;
  s << std::ifstream(file, std::ios::binary).rdbuf();
  return s.str();
}

MakeModelOptions tiny(const fs::path& out, int moe_layers = 2) {
  MakeModelOptions o;
  o.preset = "tiny";
  o.moe_layers = moe_layers;
  o.out = out;
  o.seed = 7;
  return o;
}

std::unique_ptr<Engine> open_int8_int4(const fs::path& model) {
  Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
  p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  p.dense_bits = WeightBits::int8;
  p.expert_bits = WeightBits::int4;
  return Engine::open(p, model);
}

TEST(MakeModel, TinyPresetLoadsAndGivesFiniteSpreadLogits) {
  test::ScratchDir scratch("glmrt-make-model");
  const fs::path out = scratch.path() / "model";
  const MakeModelResult r = make_model(tiny(out));
  EXPECT_EQ(r.files, 4);  // resident, 2 MoE layers, MTP
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  auto engine = open_int8_int4(out);
  const ModelConfig& c = engine->model().config();
  EXPECT_EQ(c.num_hidden_layers, 3);
  EXPECT_EQ(c.mlp_kind(0), MlpKind::dense);
  EXPECT_EQ(c.mlp_kind(1), MlpKind::sparse);
  EXPECT_TRUE(c.indexer_rope_interleave);
  ASSERT_TRUE(engine->model().weights().mtp.has_value());

  const std::vector<int32_t> tokens = {1, 200, 3, 400, 5, 600, 7, 800, 9, 1000, 11, 12};
  KvCache cache = engine->new_cache();
  const auto logits = engine->model().logits(engine->model().forward(cache, tokens), 12);
  double sum = 0, sum2 = 0;
  std::set<int64_t> top;
  for (int64_t t = 0; t < 12; ++t) {
    const float* row = logits.data() + t * c.vocab_size;
    top.insert(std::max_element(row, row + c.vocab_size) - row);
    for (int64_t i = 0; i < c.vocab_size; ++i) {
      ASSERT_TRUE(std::isfinite(row[i]));
      sum += row[i];
      sum2 += double(row[i]) * row[i];
    }
  }
  const double n = 12.0 * c.vocab_size, stddev = std::sqrt(sum2 / n - (sum / n) * (sum / n));
  EXPECT_GT(stddev, 1.0);  // lm_head's gain: logits of a few units
  EXPECT_LT(stddev, 10.0);
  EXPECT_GT(top.size(), 6u);  // positions do not all predict the same token
}

// --experts FMT: routed experts in any integer format, adopted as stored by a
// profile of that format, with the RMS of the default's (same seed: the
// outputs stay of the same size, so a benchmark compares like with like).
TEST(MakeModel, ExpertsInEveryLowBitFormatLoadAndRunAtTheDefaultsScale) {
  const std::vector<int32_t> tokens = {1, 200, 3, 400, 5, 600, 7, 800};
  auto logit_rms = [&](WeightPrecision experts) {
    test::ScratchDir scratch("glmrt-make-model-" + precision_name(experts));
    MakeModelOptions o = tiny(scratch.path() / "model", 1);
    o.experts = experts;
    make_model(o);
    Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
    p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
    p.dense_bits = WeightBits::int8;
    p.expert_bits = experts;
    auto engine = Engine::open(p, scratch.path() / "model");
    EXPECT_TRUE(engine->load_summary().requantized.empty()) << precision_name(experts);
    KvCache cache = engine->new_cache();
    const int64_t n = static_cast<int64_t>(tokens.size());
    const auto logits = engine->model().logits(engine->model().forward(cache, tokens), n);
    double sum2 = 0;
    for (float v : logits) {
      EXPECT_TRUE(std::isfinite(v));
      sum2 += double(v) * v;
    }
    return std::sqrt(sum2 / static_cast<double>(logits.size()));
  };
  const double base = logit_rms(WeightBits::int4);
  for (const WeightPrecision& f :
       {WeightPrecision(WeightBits::int3), WeightPrecision(WeightBits::int3, 64),
        WeightPrecision::two_level_of(WeightBits::int3),
        WeightPrecision::two_level_of(WeightBits::int2)}) {
    const double rms = logit_rms(f);
    EXPECT_GT(rms, 0.7 * base) << precision_name(f);
    EXPECT_LT(rms, 1.4 * base) << precision_name(f);
  }
}

// --successor-head: lm_head row j is embed_tokens row j - 1 (values and
// scale factors), so the model predicts the next id at (nearly) every position.
// Positions of `tokens` whose greedy prediction is the next id.
int successor_predictions(const fs::path& model, const std::vector<int32_t>& tokens) {
  auto engine = open_int8_int4(model);
  const int64_t vocab = engine->model().config().vocab_size;
  KvCache cache = engine->new_cache();
  const int64_t n = static_cast<int64_t>(tokens.size());
  const auto logits = engine->model().logits(engine->model().forward(cache, tokens), n);
  int successors = 0;
  for (int64_t t = 0; t < n; ++t) {
    const float* row = logits.data() + t * vocab;
    successors += std::max_element(row, row + vocab) - row == (tokens[t] + 1) % vocab;
  }
  return successors;
}

TEST(MakeModel, SuccessorHeadPredictsTheNextId) {
  const std::vector<int32_t> tokens = {5, 900, 33, 34, 35, 36, 512, 7, 1023, 100, 101, 260};
  test::ScratchDir scratch("glmrt-make-model");
  MakeModelOptions o = tiny(scratch.path() / "model");
  o.successor_head = true;
  make_model(o);
  EXPECT_GE(successor_predictions(scratch.path() / "model", tokens), 11) << "of 12 positions";

  // Without it, the same seed predicts the next id nowhere in particular.
  test::ScratchDir plain_scratch("glmrt-make-model-plain");
  make_model(tiny(plain_scratch.path() / "model"));
  EXPECT_LE(successor_predictions(plain_scratch.path() / "model", tokens), 1);
}

TEST(MakeModel, SeedLayoutStampedWithAlignedExperts) {
  test::ScratchDir scratch("glmrt-make-model");
  const fs::path out = scratch.path() / "model";
  make_model(tiny(out, 1));
  const TensorDirectory files = TensorDirectory::open(out);
  for (const TensorInfo& t : files.tensors()) {
    EXPECT_NE(t.stamp, StampedFormat::none) << t.name;
    if (t.name.ends_with("kv_b_proj.weight")) {
      EXPECT_EQ(t.stamp, StampedFormat::int8);
    }
  }
  const ModelConfig c = load_model_config(out);
  const auto layouts = plan_expert_layouts(c, files, c.num_hidden_layers + 1);
  for (int layer : {1, 2})
    for (const ExpertLayout& e : layouts.at(layer)) {
      ASSERT_EQ(e.extents.size(), 2u);  // the three matrices; the three scales
      EXPECT_EQ(e.extents[0].offset % kExpertAlignment, 0u);
      EXPECT_EQ(e.tensors[0].packed_type, GLMRT_I4);
      EXPECT_EQ(e.tensors[0].values->offset + e.tensors[0].values->byte_size,
                e.tensors[1].values->offset);
    }
}

TEST(MakeModel, SameSeedSameBytesWhateverTheWriteRegions) {
  test::ScratchDir scratch("glmrt-make-model");
  const nlohmann::ordered_json config = model_preset_config("tiny", 1, true);
  const ModelPlan plan = plan_model(config, 0.3);
  for (const PlannedFile& file : plan.files) {
    std::string previous;
    for (uint64_t region : {uint64_t{4096}, uint64_t{12288}, kPlannedFileRegionBytes}) {
      const fs::path path = scratch.path() / fmt::format("{}-{}", region, file.name);
      std::atomic<uint64_t> written{0};
      ProgressBar bar("writing", file.file_bytes());
      write_planned_file(path, file, 5, written, bar, region);
      const std::string bytes = file_bytes(path);
      EXPECT_EQ(bytes.size(), file.file_bytes());
      EXPECT_EQ(written.load(), file.file_bytes());
      if (!previous.empty()) {
        EXPECT_TRUE(bytes == previous) << file.name << " region " << region;
      }
      previous = bytes;
    }
  }
  // Another seed, other bytes.
  const PlannedFile& experts = plan.files.at(1);
  std::atomic<uint64_t> written{0};
  ProgressBar bar("writing", experts.file_bytes());
  write_planned_file(scratch.path() / "seed6", experts, 6, written, bar);
  EXPECT_FALSE(file_bytes(scratch.path() / "seed6") ==
               file_bytes(scratch.path() / fmt::format("4096-{}", experts.name)));
}

TEST(MakeModel, HotSkewBiasesTheRouterTowardsAFewExperts) {
  test::ScratchDir scratch("glmrt-make-model");
  for (const double skew : {0.0, 0.6}) {
    const fs::path out = scratch.path() / fmt::format("skew{}", skew);
    MakeModelOptions o = tiny(out, 1);
    o.hot_skew = skew;
    make_model(o);
    const TensorDirectory files = TensorDirectory::open(out);
    std::vector<float> bias =
        files.read_f32(files.at("model.layers.1.mlp.gate.e_score_correction_bias"));
    std::sort(bias.rbegin(), bias.rend());
    if (skew == 0) {
      EXPECT_LT(bias.front(), 0.011f);
    } else {
      EXPECT_NEAR(bias[0], 0.6f, 0.011f);       // the hottest expert
      EXPECT_LT(bias[bias.size() / 2], 0.05f);  // most experts get next to nothing
    }
  }
}

TEST(MakeModel, DestinationInUseIsRefusedBeforeWriting) {
  test::ScratchDir scratch("glmrt-make-model");
  const fs::path out = scratch.path() / "model";
  fs::create_directories(out);
  std::ofstream(out / "keep.txt") << "mine";
  try {
    make_model(tiny(out));
    FAIL() << "a non-empty directory was written into";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already exists and is not an empty directory"),
              std::string::npos)
        << e.what();
  }
  const fs::path other = scratch.path() / "other";
  fs::create_directories(other.string() + ".partial");
  try {
    make_model(tiny(other));
    FAIL() << "a leftover .partial was ignored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("an earlier make-model was interrupted"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::exists(out / "keep.txt"));
  EXPECT_FALSE(fs::exists(other));
}

TEST(MakeModelCommand, WritesAModelAndRefusesUnknownPresets) {
  test::ScratchDir scratch("glmrt-make-model");
  const fs::path out = scratch.path() / "model";
  auto [status, text] = test::run_shell(fmt::format(
      "{}/glmrt make-model --preset tiny --moe-layers 1 --no-mtp --hot-skew 0.2 --out {} 2>&1",
      GLMRT_BUILD_DIR, out.string()));
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("wrote " + out.string() + ": 2 files"), std::string::npos) << text;
  EXPECT_EQ(load_model_config(out).num_nextn_predict_layers, 0);
  std::tie(status, text) = test::run_shell(
      fmt::format("{}/glmrt make-model --preset huge --moe-layers 1 --out {}/x 2>&1",
                  GLMRT_BUILD_DIR, scratch.path().string()));
  EXPECT_EQ(status, 1);
  EXPECT_NE(text.find("unknown preset `huge` (known: glm5-slice, deepseek-v3-slice, "
                      "kimi-k2-slice, tiny, tiny-256)"),
            std::string::npos)
      << text;
}

// The DeepSeek presets are configs glmrt loads as their kinds, at the real
// dimensions, and their plans hold no indexer tensors (those kinds have none).
TEST(MakeModel, DeepseekPresetsLoadAsTheirKinds) {
  test::ScratchDir scratch("glmrt-make-model");
  struct Expected {
    const char* preset;
    const char* model_type;
    int experts, n_group, topk_group;
    double yarn_factor;
  };
  for (const Expected& e : {Expected{"deepseek-v3-slice", "deepseek_v3", 256, 8, 4, 40},
                            Expected{"kimi-k2-slice", "kimi_k2", 384, 1, 1, 32}}) {
    const nlohmann::ordered_json config = model_preset_config(e.preset, 1, false);
    const fs::path dir = scratch.path() / e.preset;
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << config.dump();
    const ModelConfig c = load_model_config(dir);
    EXPECT_EQ(c.model_type, e.model_type);
    EXPECT_EQ(c.hidden_size, 7168);
    EXPECT_EQ(c.n_routed_experts, e.experts);
    EXPECT_EQ(c.moe_intermediate_size, 2048);
    EXPECT_EQ(c.num_experts_per_tok, 8);
    EXPECT_EQ(c.n_group, e.n_group);
    EXPECT_EQ(c.topk_group, e.topk_group);
    EXPECT_EQ(c.rope.scaling.factor, e.yarn_factor);
    EXPECT_EQ(c.mlp_kind(0), MlpKind::dense);
    EXPECT_EQ(c.indexer_kind(1), IndexerKind::none);
    const ModelPlan plan = plan_model(config, 0.0);
    for (const PlannedFile& file : plan.files)
      for (const auto& t : file.tensors)
        EXPECT_EQ(t.name.find("indexer"), std::string::npos) << e.preset << " " << t.name;
  }
}

}  // namespace
}  // namespace glmrt
