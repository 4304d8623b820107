// Generated checkpoints that differ from glm_tiny in every way a held-out
// checkpoint may: dimensions, grouped routing, dtype on disk, shared indexer
// layers, RoPE pairings, MTP without local copies, single-file storage. Each
// runs teacher-forced and greedy through the runtime and is compared with
// the independent double-precision reference.
#include <glmrt/generate/session.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>

#include "checkpoint_generator.h"
#include "variant_harness.h"

namespace glmrt::test {
namespace {

constexpr int kPromptLength = 12;  // > index_topk (6): half the rows are sparse
constexpr int kGreedySteps = 4;

struct Variant {
  std::string name;
  std::function<void(nlohmann::json&)> edit_config = [](nlohmann::json&) {};
  StoredDType dtype = StoredDType::f32;
  bool mtp_local_copies = true;
  int shards = 3;
};

void grouped_router(nlohmann::json& c) {
  c["n_group"] = 4;  // 3 experts per group; top-3 from the best 2 groups
  c["topk_group"] = 2;
  c["norm_topk_prob"] = false;
}
void shared_indexer_types(nlohmann::json& c) {
  c["indexer_types"] = {"full", "shared", "full", "shared", "shared"};
}
void shared_index_topk_pattern(nlohmann::json& c) {
  c.erase("indexer_types");
  c["index_topk_pattern"] = "FSSFS";
}
void swapped_rope_styles(nlohmann::json& c) {
  c["indexer_rope_interleave"] = true;
  c["rope_interleave"] = false;
}
void dense_by_first_k(nlohmann::json& c) {
  c.erase("mlp_layer_types");
  c["first_k_dense_replace"] = 2;
}

std::vector<Variant> variants() {
  return {
      {"a_other_dimensions"},
      {"b_grouped_router_unnormalised", grouped_router},
      {"c_bf16_on_disk", [](nlohmann::json& c) { c["torch_dtype"] = "bfloat16"; },
       StoredDType::bf16},
      {"c_f16_on_disk", [](nlohmann::json& c) { c["torch_dtype"] = "float16"; }, StoredDType::f16},
      {"d_shared_indexer_by_indexer_types", shared_indexer_types},
      {"d_shared_indexer_by_index_topk_pattern", shared_index_topk_pattern},
      {"e_interleaved_indexer_split_half_main_rope", swapped_rope_styles},
      {"f_mtp_without_local_copies", {}, StoredDType::f32, false},
      {"g_single_file", {}, StoredDType::f32, true, 1},
      {"dense_layers_by_first_k_dense_replace", dense_by_first_k},
      {"all_at_once",
       [](nlohmann::json& c) {
         grouped_router(c);
         shared_index_topk_pattern(c);
         swapped_rope_styles(c);
       },
       StoredDType::bf16, false, 1},
  };
}

// One generated checkpoint with its clear sequence, built once per variant
// and shared by that variant's tests.
struct GeneratedVariant {
  ScratchDir dir{"glmrt-variant"};
  nlohmann::json config_json;
  ReferenceConfig config;
  TensorList weights;
  ClearSequence sequence;
};

const GeneratedVariant& generated(const Variant& v) {
  static std::map<std::string, std::unique_ptr<GeneratedVariant>> cache;
  auto& slot = cache[v.name];
  if (!slot) {
    auto g = std::make_unique<GeneratedVariant>();
    g->config_json = base_variant_config();
    if (v.edit_config) v.edit_config(g->config_json);
    g->config = ReferenceConfig::from_json(g->config_json);
    g->weights =
        make_checkpoint_tensors({g->config_json, /*seed=*/20260601, v.dtype, v.mtp_local_copies});
    write_checkpoint(g->dir.path(), g->config_json, g->weights, v.shards);
    g->sequence = choose_clear_sequence(g->config, g->weights, kPromptLength, kGreedySteps, 77);
    slot = std::move(g);
  }
  return *slot;
}

class VariantCheckpoint : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    const GeneratedVariant& g = generated(GetParam());
    config_ = g.config;
    sequence_ = g.sequence;
    engine_ = open_reference_engine(g.dir.path());
  }

  ReferenceConfig config_;
  ClearSequence sequence_;
  std::unique_ptr<Engine> engine_;
};

TEST_P(VariantCheckpoint, TeacherForcedLogitsMatchTheReference) {
  const auto& want = sequence_.reference.logits;
  const auto got = runtime_teacher_forced(*engine_, sequence_.full);
  ASSERT_EQ(got.size(), want.size());
  double scale = 1.0, worst = 0.0;
  for (const auto& row : want)
    for (double v : row) scale = std::max(scale, std::abs(v));
  for (size_t t = 0; t < want.size(); ++t) {
    ASSERT_EQ(got[t].size(), want[t].size());
    double row_worst = 0.0;
    for (size_t v = 0; v < want[t].size(); ++v)
      row_worst = std::max(row_worst, std::abs(got[t][v] - want[t][v]));
    EXPECT_LE(row_worst, 1e-3 * scale) << "row " << t;
    EXPECT_EQ(argmax(got[t]), sequence_.reference.argmax(t)) << "row " << t;
    worst = std::max(worst, row_worst);
  }
  std::printf(
      "[%s] %zu rows, logit scale %.2f, max|dlogit| %.2e, prompt attempts %d, "
      "min router gap %.2e, min indexer rel gap %.2e\n",
      GetParam().name.c_str(), want.size(), scale, worst, sequence_.attempts,
      sequence_.reference.min_router_gap, sequence_.reference.min_indexer_rel_gap);
}

TEST_P(VariantCheckpoint, GreedyDecodeThroughSessionFollowsTheReference) {
  Session session(*engine_);
  std::vector<float> logits = session.set_context(sequence_.prompt);
  for (int step = 0; step < kGreedySteps; ++step) {
    const int token = argmax(logits);
    ASSERT_EQ(token, sequence_.greedy[step]) << "greedy step " << step;
    if (step + 1 < kGreedySteps) logits = session.append(token);
  }
}

TEST_P(VariantCheckpoint, PrefillInTwoChunksMatchesTheReference) {
  // Reusing a cached prefix runs the rest as one multi-row step starting past
  // index_topk: rows with and without an indexer choice in one batch.
  Session session(*engine_);
  const std::vector<int32_t>& prompt = sequence_.prompt;
  session.set_context(std::span(prompt).first(9));
  const std::vector<float> logits = session.set_context(prompt);
  EXPECT_EQ(session.stats().reused_tokens, 9);
  const auto& want = sequence_.reference.logits.at(prompt.size() - 1);
  double worst = 0.0, scale = 1.0;
  for (size_t v = 0; v < want.size(); ++v) {
    worst = std::max(worst, std::abs(logits[v] - want[v]));
    scale = std::max(scale, std::abs(want[v]));
  }
  EXPECT_LE(worst, 1e-3 * scale);
}

TEST_P(VariantCheckpoint, MtpLogitsMatchTheReference) {
  ASSERT_TRUE(engine_->model().has_mtp());
  const auto& mtp = *engine_->model().weights().mtp;
  EXPECT_EQ(mtp.embed.empty(), !GetParam().mtp_local_copies);
  EXPECT_EQ(mtp.head.empty(), !GetParam().mtp_local_copies);

  const std::vector<int32_t>& tokens = sequence_.full;
  const int64_t rows = static_cast<int64_t>(tokens.size()) - 1;
  KvCache cache = engine_->new_cache();
  const std::vector<float> hidden = engine_->model().forward(cache, tokens);
  const std::vector<int32_t> next(tokens.begin() + 1, tokens.end());
  // The MTP layer consumes the main model's final-normed state.
  const std::vector<float> normed = engine_->model().final_norm(hidden, rows);
  const auto mtp_hidden = engine_->model().mtp_forward(cache, next, normed);
  const auto got = engine_->model().mtp_logits(mtp_hidden, rows);

  const auto& want = sequence_.reference.mtp_logits;
  ASSERT_EQ(static_cast<int64_t>(want.size()), rows);
  ASSERT_EQ(static_cast<int64_t>(got.size()), rows * config_.vocab);
  double scale = 1.0, worst = 0.0;
  for (const auto& row : want)
    for (double v : row) scale = std::max(scale, std::abs(v));
  for (int64_t t = 0; t < rows; ++t)
    for (int v = 0; v < config_.vocab; ++v)
      worst = std::max(worst, std::abs(got[t * config_.vocab + v] - want[t][v]));
  EXPECT_LE(worst, 1e-3 * scale);
  std::printf("[%s] MTP %lld rows, max|dlogit| %.2e\n", GetParam().name.c_str(),
              static_cast<long long>(rows), worst);
}

INSTANTIATE_TEST_SUITE_P(Generated, VariantCheckpoint, ::testing::ValuesIn(variants()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace glmrt::test
