// With sampling, drafting leaves the output distribution exactly the model's:
// on a generated checkpoint with a 16-token vocabulary, thousands of seeded
// three-token answers decoded with drafts (a deterministic drafter,
// draft-ngram; stochastic ones, draft-mtp drawing from its own head and a
// random dense q) are held by a chi-square test against the exact law of
// three tokens computed from the model's logits — temperature, top-k, top-p,
// min-p and both penalties applied as the sampler applies them.
#include "checkpoint_generator.h"
#include "chi_square.h"
#include "engine_fixture.h"
#include "test_drafters.h"

#include <glmrt/generate/generator.h>
#include <glmrt/generate/speculator.h>

#include <gtest/gtest.h>

#include <map>

namespace glmrt {
namespace {

constexpr int32_t kVocab = 16;
constexpr int kSamples = 2500;

nlohmann::json small_vocabulary_config() {
  return {
      {"architectures", {"GlmMoeDsaForCausalLM"}},
      {"model_type", "glm_moe_dsa"},
      {"vocab_size", kVocab},
      {"hidden_size", 32},
      {"intermediate_size", 48},
      {"moe_intermediate_size", 16},
      {"num_hidden_layers", 2},
      {"num_attention_heads", 2},
      {"num_key_value_heads", 2},
      {"n_shared_experts", 1},
      {"n_routed_experts", 4},
      {"routed_scaling_factor", 2.5},
      {"kv_lora_rank", 16},
      {"q_lora_rank", 16},
      {"qk_rope_head_dim", 4},
      {"qk_nope_head_dim", 8},
      {"qk_head_dim", 12},
      {"v_head_dim", 8},
      {"head_dim", 4},
      {"n_group", 1},
      {"topk_group", 1},
      {"num_experts_per_tok", 2},
      {"norm_topk_prob", true},
      {"topk_method", "noaux_tc"},
      {"scoring_func", "sigmoid"},
      {"first_k_dense_replace", 1},
      {"mlp_layer_types", {"dense", "sparse"}},
      {"hidden_act", "silu"},
      {"max_position_embeddings", 256},
      {"rms_norm_eps", 1e-5},
      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 500.0}}},
      {"rope_interleave", true},
      {"indexer_rope_interleave", false},
      {"index_topk", 64},
      {"index_head_dim", 8},
      {"index_n_heads", 1},
      {"indexer_types", {"full", "full"}},
      {"num_nextn_predict_layers", 1},
      {"tie_word_embeddings", false},
      {"bos_token_id", 0},
      {"eos_token_id", {15}},
      {"pad_token_id", 14},
      {"torch_dtype", "float32"},
  };
}

SamplingParams shaped_sampling(uint64_t seed) {
  SamplingParams p;
  p.temperature = 1.3;
  p.top_k = 12;
  p.top_p = 0.97;
  p.min_p = 0.01;
  p.repetition_penalty = 1.25;
  p.presence_penalty = 0.4;
  p.seed = seed;
  return p;
}

const std::vector<int32_t> kPrompt = {3, 5, 3, 7, 3, 5, 3};

class SampledLawTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::ScratchDir>("glmrt-sampled-law");
    const nlohmann::json config = small_vocabulary_config();
    test::write_checkpoint(dir_->path(), config, test::make_checkpoint_tensors({config, 4242}), 1);
    engine_ = Engine::open(test_support::reference_profile(), dir_->path());
    law_ = exact_law();
  }
  static void TearDownTestSuite() {
    engine_.reset();
    dir_.reset();
  }

  /// P(t1, t2, t3) at index (t1 * V + t2) * V + t3, from plain decode steps.
  static std::vector<double> exact_law() {
    Session session(*engine_, std::nullopt);
    const Sampler sampler(shaped_sampling(0));
    std::vector<double> law(kVocab * kVocab * kVocab, 0.0);
    std::vector<int32_t> context = kPrompt, answer;
    const auto p1 = sampler.distribution(session.set_context(context), context, answer);
    for (const auto& [t1, q1] : p1) {
      context.push_back(t1), answer.push_back(t1);
      const auto p2 = sampler.distribution(session.set_context(context), context, answer);
      for (const auto& [t2, q2] : p2) {
        context.push_back(t2), answer.push_back(t2);
        const auto p3 = sampler.distribution(session.set_context(context), context, answer);
        for (const auto& [t3, q3] : p3) law[(t1 * kVocab + t2) * kVocab + t3] = q1 * q2 * q3;
        context.pop_back(), answer.pop_back();
      }
      context.pop_back(), answer.pop_back();
    }
    return law;
  }

  /// Three-token answers from `session` (one seeded sampler for all).
  static std::vector<int64_t> sample(Session& session) {
    Sampler sampler(shaped_sampling(20260702));
    std::vector<int64_t> counts(kVocab * kVocab * kVocab, 0);
    for (int i = 0; i < kSamples; ++i) {
      const Generation g = generate(session, sampler, kPrompt, {3, {}});
      EXPECT_EQ(g.tokens.size(), 3u);
      ++counts[(g.tokens[0] * kVocab + g.tokens[1]) * kVocab + g.tokens[2]];
    }
    return counts;
  }

  static void expect_model_law(Session& session, const std::string& what) {
    const auto counts = sample(session);
    const test::ChiSquare fit = test::chi_square(counts, law_);
    EXPECT_TRUE(fit.fits()) << what << ": chi2 " << fit.statistic << " with "
                            << fit.degrees_of_freedom << " df (bound " << fit.bound() << ")";
    const DraftStats& stats = session.speculator()->stats();
    EXPECT_GT(stats.proposed, kSamples) << what;
    // Both outcomes happen: the verifier really accepts and really rejects.
    EXPECT_GT(stats.accepted, 0) << what;
    EXPECT_LT(stats.accepted, stats.proposed) << what;
    std::printf("[%s] chi2 %.1f, %d df; %lld of %lld drafts accepted\n", what.c_str(),
                fit.statistic, fit.degrees_of_freedom, static_cast<long long>(stats.accepted),
                static_cast<long long>(stats.proposed));
  }

  /// The checkpoint under reference.yaml with `name` drafting 2 tokens a step.
  static std::unique_ptr<Engine> drafting_engine(const std::string& name,
                                                 std::map<std::string, std::string> settings) {
    Profile profile = test_support::reference_profile();
    profile.draft = PluginChoice{name, std::move(settings), {}};
    profile.max_draft_tokens = 2;
    profile.draft_adaptive = false;
    return Engine::open(profile, dir_->path());
  }

  static inline std::unique_ptr<test::ScratchDir> dir_;
  static inline std::unique_ptr<Engine> engine_;
  static inline std::vector<double> law_;
};

TEST_F(SampledLawTest, TheExactLawIsAProbability) {
  double total = 0;
  int support = 0;
  for (double p : law_) total += p, support += p > 0;
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_GT(support, 200);
}

TEST_F(SampledLawTest, DeterministicDrafterKeepsTheLaw) {
  auto engine = drafting_engine("draft-ngram", {{"min_n", "0"}});
  Session session(*engine);
  expect_model_law(session, "draft-ngram");
}

TEST_F(SampledLawTest, MtpDrafterSamplingItsOwnHeadKeepsTheLaw) {
  auto engine = drafting_engine("draft-mtp", {});
  Session session(*engine);
  expect_model_law(session, "draft-mtp");
}

TEST_F(SampledLawTest, ARandomDenseQKeepsTheLaw) {
  test_support::RandomQDrafter drafter(kVocab);
  Session session(*engine_, borrowed_drafter(drafter, {2, 1, false}, "random-q"));
  expect_model_law(session, "random q");
}

}  // namespace
}  // namespace glmrt
