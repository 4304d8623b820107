// Batched steps under the shipped quantized and stored-weight profiles: with
// int8 weights and activations (configs/demo.yaml on models/glm-demo) and
// GGUF types with int8x2 activations (configs/gguf.yaml on a llama.cpp-made
// GLM-DSA file), a sequence's logits in a step with others — decoding,
// prefilling a chunk, or starting — are bit for bit its logits alone, and
// greedy streams decoded together give each stream's own tokens.
#include "engine_fixture.h"

#include <glmrt/generate/batch_generation.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

struct ProfileCase {
  std::string name, profile;
  fs::path model;
  bool avx2;  // whether the profile's kernels need AVX2
};

Profile shipped_profile(const std::string& file) {
  Profile profile = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / file);
  profile.plugin_paths.insert(profile.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  return profile;
}

bool identical_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

SamplingParams greedy_params() {
  SamplingParams p;
  p.temperature = 0;
  return p;
}

class BatchUnderProfile : public testing::TestWithParam<ProfileCase> {
 protected:
  void SetUp() override {
    if (GetParam().avx2 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
      GTEST_SKIP() << "no AVX2 on this CPU";
    engine_ = Engine::open(shipped_profile(GetParam().profile), GetParam().model);
    const int32_t V = static_cast<int32_t>(engine_->config().vocab_size);
    // Mixed lengths; the longest past 16 rows (its chunk may run the
    // reconstructed form) and past index_topk on the demo model (32).
    const auto ids = [&](int n, int32_t seed) {
      std::vector<int32_t> p;
      for (int i = 0; i < n; ++i) p.push_back((seed + i * 7919) % (V - 20) + 10);
      return p;
    };
    prompts_ = {ids(36, 3), ids(5, 101), ids(21, 57)};
  }
  std::unique_ptr<Engine> engine_;
  std::vector<std::vector<int32_t>> prompts_;
};

TEST_P(BatchUnderProfile, LogitsInAStepWithOthersAreTheLogitsAlone) {
  Engine& engine = *engine_;
  const auto& p = prompts_;
  const std::vector<int32_t> chunk(p[2].begin(), p[2].begin() + 9);
  Session a(engine, std::nullopt), b(engine, std::nullopt), c(engine, std::nullopt);
  a.set_context(p[0]);
  b.set_context(p[1]);
  const std::vector<float> want_a = a.append(p[1][0]);
  const std::vector<float> want_b = b.extend(chunk);
  const std::vector<float> want_c = c.set_context(p[2]);

  Session ta(engine, std::nullopt), tb(engine, std::nullopt), tc(engine, std::nullopt);
  ta.set_context(p[0]);
  tb.set_context(p[1]);
  tc.keep_prefix(p[2]);
  const SessionStep steps[] = {
      {ta, std::span(p[1]).first(1), false, true}, {tb, chunk, true, true}, {tc, p[2], true, true}};
  const auto got = Session::run_together(steps);
  const int64_t V = engine.config().vocab_size;
  EXPECT_TRUE(identical_bits(got[0], want_a)) << "decoding next to a prefill";
  EXPECT_TRUE(identical_bits(got[1], std::span(want_b).last(V))) << "a chunk next to others";
  EXPECT_TRUE(identical_bits(got[2], want_c)) << "a prompt next to others";
}

TEST_P(BatchUnderProfile, GreedyStreamsGiveTheirOwnTokens) {
  constexpr int kNew = 12;
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Sampler>> samplers;
  BatchGeneration batch(*engine_);
  for (const auto& prompt : prompts_) {
    sessions.push_back(std::make_unique<Session>(*engine_, std::nullopt));
    samplers.push_back(std::make_unique<Sampler>(greedy_params()));
    batch.add(*sessions.back(), *samplers.back(), prompt, {kNew, {}});
  }
  batch.run();
  for (size_t i = 0; i < prompts_.size(); ++i) {
    Session session(*engine_, std::nullopt);
    Sampler sampler(greedy_params());
    const Generation want = generate(session, sampler, prompts_[i], {kNew, {}});
    EXPECT_EQ(batch.result(static_cast<int>(i)).tokens, want.tokens) << "stream " << i;
  }
}

const fs::path kDemoModel = fs::path(GLMRT_SOURCE_DIR) / "models" / "glm-demo";
const fs::path kGgufModel = fs::path(GLMRT_FIXTURES) / "gguf" / "glm_dsa-Q4_K_M.gguf";

INSTANTIATE_TEST_SUITE_P(Profiles, BatchUnderProfile,
                         testing::Values(ProfileCase{"demo", "demo.yaml", kDemoModel, false},
                                         ProfileCase{"gguf", "gguf.yaml", kGgufModel, true},
                                         ProfileCase{"gguf_demo", "gguf.yaml", kDemoModel, true}),
                         [](const testing::TestParamInfo<ProfileCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace glmrt
