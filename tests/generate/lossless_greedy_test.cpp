// Lossless greedy drafting on a quantized model: on a generated checkpoint
// with an MTP layer, int8 dense weights and int4 experts (nvme.yaml's
// precision), under each kernels plugin, a row verified among others gives
// bit for bit the logits decoding it alone gives, so greedy output with
// draft-mtp, draft-ngram or a drafter that is often right equals the output
// without drafting, token for token. (At f32 the oracle tests cover this; a
// kernel quantizing activations or tiling rows by S differently broke it here
// from the second token on, with no draft accepted.)
#include "engine_fixture.h"
#include "test_drafters.h"

#include <glmrt/generate/generator.h>
#include <glmrt/generate/speculator.h>
#include <glmrt/model_maker/make_model.h>

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <string>
#include <tuple>

#include "checkpoint_generator.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;

constexpr int kNewTokens = 24;
// Longer than glm_tiny's index_topk (8): DSA selects keys for later rows.
const std::vector<int32_t> kPrompt = {5, 812, 33, 47, 1000, 2, 640, 71, 9, 300, 18, 555};

class LosslessGreedy : public testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::make_unique<test::ScratchDir>("glmrt-lossless-greedy");
    MakeModelOptions o;
    o.preset = "tiny";
    o.moe_layers = 2;
    o.out = scratch_->path() / "model";
    o.seed = 12;
    make_model(o);
  }
  static void TearDownTestSuite() { scratch_.reset(); }

  void SetUp() override {
    if (GetParam() == "kernels-avx2" &&
        !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
      GTEST_SKIP() << "no AVX2 on this CPU";
  }

  static Profile quantized_profile(const std::string& kernels) {
    Profile p = test_support::reference_profile();
    p.kernels = PluginChoice{kernels, {}, {}};
    p.dense_bits = WeightBits::int8;
    p.expert_bits = WeightBits::int4;
    p.expert_cache_per_layer = 4;  // experts come and go: cache state must not matter
    return p;
  }
  static fs::path model() { return scratch_->path() / "model"; }

  static inline std::unique_ptr<test::ScratchDir> scratch_;
};

/// Whether two logit rows hold the same bits.
bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_P(LosslessGreedy, VerifiedRowsAreTheRowsDecodedAlone) {
  auto engine = Engine::open(quantized_profile(GetParam()), model());
  const int64_t V = engine->model().config().vocab_size;
  Session plain(*engine, std::nullopt);
  Sampler sampler(test_support::greedy_sampling());
  const Generation g = generate(plain, sampler, kPrompt, {kNewTokens, {}});
  ASSERT_EQ(g.tokens.size(), size_t{kNewTokens});

  // Each position alone, one extend per token.
  Session alone(*engine, std::nullopt);
  std::vector<std::vector<float>> single;
  single.push_back(alone.set_context(kPrompt));
  for (int32_t t : g.tokens) single.push_back(alone.extend(std::span(&t, 1)));

  // Rows of 2..6 tokens at a time, at every offset: each row's logits are
  // the ones decoding it alone gave.
  for (int64_t rows : {2, 3, 5, 6}) {
    for (int64_t start = 0; start + rows <= kNewTokens; start += rows + 1) {
      // The context as decoding wrote it (a prefill of more than 16 rows may
      // run the reconstructed form, whose rows differ in the last bits).
      Session batched(*engine, std::nullopt);
      batched.set_context(kPrompt);
      for (int64_t t = 0; t < start; ++t) batched.extend(std::span(&g.tokens[t], 1));
      const std::span<const int32_t> batch(g.tokens.data() + start, static_cast<size_t>(rows));
      const std::vector<float> logits = batched.extend(batch);
      ASSERT_EQ(logits.size(), static_cast<size_t>(rows * V));
      for (int64_t r = 0; r < rows; ++r)
        EXPECT_TRUE(same_bits(std::span(logits).subspan(r * V, V),
                              single[static_cast<size_t>(start + r + 1)]))
            << GetParam() << ": row " << r << " of " << rows << " at token " << start;
    }
  }
}

TEST_P(LosslessGreedy, DraftingChangesNoToken) {
  auto engine = Engine::open(quantized_profile(GetParam()), model());
  Sampler sampler(test_support::greedy_sampling());
  Session plain(*engine, std::nullopt);
  const Generation want = generate(plain, sampler, kPrompt, {kNewTokens, {}});

  std::vector<int32_t> script = kPrompt;
  script.insert(script.end(), want.tokens.begin(), want.tokens.end());
  test_support::ScriptedDrafter scripted(script, 3, 1024);
  const std::vector<std::tuple<std::string, PluginChoice, DraftPolicy>> drafters = {
      {"draft-mtp fixed 3", {"draft-mtp", {{"p_min", "0"}}, {}}, {3, 1, false}},
      {"draft-mtp fixed 1", {"draft-mtp", {{"p_min", "0"}}, {}}, {1, 1, false}},
      {"draft-ngram fixed 4", {"draft-ngram", {{"min_n", "0"}}, {}}, {4, 1, false}},
  };
  for (const auto& [what, choice, policy] : drafters) {
    Session drafted(*engine, engine->draft_setup(choice, policy));
    Sampler s(test_support::greedy_sampling());
    const Generation got = generate(drafted, s, kPrompt, {kNewTokens, {}});
    EXPECT_EQ(got.tokens, want.tokens) << GetParam() << ", " << what;
    EXPECT_GT(drafted.speculator()->stats().proposed, 0) << what;
  }
  // A drafter right two times in three: accepted drafts and rejections.
  Session drafted(*engine, borrowed_drafter(scripted, {4, 1, false}, "scripted"));
  Sampler s(test_support::greedy_sampling());
  const Generation got = generate(drafted, s, kPrompt, {kNewTokens, {}});
  EXPECT_EQ(got.tokens, want.tokens) << GetParam() << ", scripted";
  EXPECT_GT(drafted.speculator()->stats().accepted, 0);
  EXPECT_LT(drafted.speculator()->stats().accepted, drafted.speculator()->stats().proposed);
}

INSTANTIATE_TEST_SUITE_P(Kernels, LosslessGreedy, testing::Values("kernels-scalar", "kernels-avx2"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace glmrt
