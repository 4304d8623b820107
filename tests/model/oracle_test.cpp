// The forward pass against transformers' outputs for the tiny checkpoints:
// glm_tiny (glm_moe_dsa) and deepseek_tiny (deepseek_v3: YaRN, grouped
// routing, no indexer), each in every attention form and chunking.
#include <glmrt/engine/engine.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <glmrt/base/error.h>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <ostream>

namespace glmrt {
namespace {

const std::filesystem::path kConfigs = std::filesystem::path(GLMRT_SOURCE_DIR) / "configs";

ValidationReport run(const std::string& profile_name, const ValidateOptions& options = {},
                     const std::string& fixture = "glm_tiny") {
  const std::filesystem::path model = std::filesystem::path(GLMRT_FIXTURES) / fixture;
  Profile profile = load_profile(kConfigs / profile_name);
  profile.plugin_paths.insert(profile.plugin_paths.begin(),
                              std::filesystem::path(GLMRT_BUILD_DIR) / "plugins");
  auto engine = Engine::open(profile, model);
  const auto cases = load_oracle(model / "ref.json");
  auto report = validate(*engine, cases, profile.validate, options);
  for (const auto& c : report.cases)
    std::printf("[%s] %-8s greedy %lld/%lld top1 %.4f max|dlogit| %.3e mean KL %.3e %s\n",
                profile_name.c_str(), c.name.c_str(), static_cast<long long>(c.greedy_identical),
                static_cast<long long>(c.greedy_total), c.top1_agree, c.max_abs_dlogit, c.mean_kl,
                c.pass ? "pass" : "FAIL");
  return report;
}

// Each checkpoint of an f32 oracle and its number of cases.
struct OracleFixture {
  std::string name;
  size_t cases;
};

void PrintTo(const OracleFixture& fixture, std::ostream* out) {
  *out << fixture.name;
}

class OracleFixtures : public ::testing::TestWithParam<OracleFixture> {};

TEST_P(OracleFixtures, ReferenceProfileMatchesTransformersAtF32Thresholds) {
  const auto report = run("reference.yaml", {}, GetParam().name);
  ASSERT_EQ(report.cases.size(), GetParam().cases);
  for (const auto& c : report.cases) {
    EXPECT_TRUE(c.pass) << c.name;
    EXPECT_EQ(c.greedy_identical, c.greedy_total) << c.name;
    EXPECT_EQ(c.rows_need_dsa, 0) << c.name;
    EXPECT_EQ(c.rows_checked, c.rows_total) << c.name;
    EXPECT_LE(c.max_abs_dlogit, 1e-3) << c.name;
    EXPECT_EQ(c.top1_agree, 1.0) << c.name;
  }
  EXPECT_TRUE(report.pass);
}

// (A bf16 cache is checked in every form on a generated checkpoint whose
// decisions are clear of ties, tests/variants/attention_forms_test.cpp: on
// glm_tiny, whose router gaps are ~1e-3, bf16 rounding flips experts.)
TEST_P(OracleFixtures, EveryAttentionFormMatchesTransformersInOneCallAndInChunks) {
  for (auto form : {AttentionFormChoice::absorbed, AttentionFormChoice::reconstructed})
    for (int64_t chunk : {0, 7}) {
      const auto report = run("reference.yaml", {chunk, form}, GetParam().name);
      ASSERT_EQ(report.cases.size(), GetParam().cases);
      for (const auto& c : report.cases) {
        SCOPED_TRACE(::testing::Message()
                     << c.name << " form " << static_cast<int>(form) << " chunk " << chunk);
        EXPECT_TRUE(c.pass);
        EXPECT_EQ(c.rows_checked, c.rows_total);
        EXPECT_EQ(c.rows_need_dsa, 0);
        EXPECT_EQ(c.indexer_rows_differ, 0);
        EXPECT_EQ(c.routing_rows_differ, 0);
        EXPECT_GT(c.routing_rows_compared, 0);
        EXPECT_EQ(c.greedy_identical, c.greedy_total);
        EXPECT_LE(c.max_abs_dlogit, 1e-3);
        EXPECT_EQ(c.prefill_chunk, chunk);
        const auto calls = [&](int64_t n) { return chunk ? (n + chunk - 1) / chunk : 1; };
        const int64_t prompt = c.rows_total - c.greedy_total;  // full_ids = prompt + generated
        EXPECT_EQ(c.forward_calls, calls(c.rows_total) + calls(prompt) + c.greedy_total - 1);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, OracleFixtures,
                         // deepseek_tiny is transformers' deepseek_v3; the other three
                         // are tools/kind-fixtures/make_kind_fixtures.py's (BF16 on disk).
                         ::testing::Values(OracleFixture{"glm_tiny", 5},
                                           OracleFixture{"deepseek_tiny", 6},
                                           OracleFixture{"deepseek_v3_bf16", 3},
                                           OracleFixture{"kimi_k2_tiny", 2},
                                           OracleFixture{"deepseek_v32_tiny", 3}),
                         [](const auto& info) { return info.param.name; });

// What each kind's fixture exercises is there: the checks above compared it.
TEST(OracleKinds, EachFixtureExercisesItsKind) {
  const auto v3 = run("reference.yaml", {}, "deepseek_v3_bf16");
  for (const auto& c : v3.cases) EXPECT_EQ(c.mtp_top1_agree, 1.0) << c.name;  // layer 3 = MTP
  EXPECT_TRUE(v3.cases.front().mtp_checked);
  const auto v32 = run("reference.yaml", {}, "deepseek_v32_tiny");
  for (const auto& c : v32.cases) {
    EXPECT_GT(c.indexer_rows_compared, 0) << c.name;  // rows past index_topk are sparse
    EXPECT_EQ(c.indexer_rows_differ, 0) << c.name;
  }
}

// A checkpoint whose query projection is not the config's is refused naming both.
TEST(OracleKinds, QueryProjectionMustMatchTheConfig) {
  namespace fs = std::filesystem;
  const fs::path source = fs::path(GLMRT_FIXTURES) / "deepseek_v3_bf16";
  const fs::path dir = fs::temp_directory_path() / ("glmrt-qproj-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(source, dir);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(source / "config.json"));
  config["q_lora_rank"] = 32;
  std::ofstream(dir / "config.json") << config.dump();
  Profile profile = load_profile(kConfigs / "reference.yaml");
  profile.plugin_paths.insert(profile.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  try {
    Engine::open(profile, dir);
    ADD_FAILURE() << "a q_proj checkpoint loaded with q_lora_rank 32";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("model.layers.0.self_attn.q_proj.weight is present"), std::string::npos)
        << what;
    EXPECT_NE(what.find("'q_lora_rank' is 32"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

TEST(Oracle, Int8ProfilePassesItsThresholds) {
  const auto report = run("reference-int8.yaml");
  EXPECT_TRUE(report.pass);
}

TEST(Oracle, AutoKernelsMatchAtF32Thresholds) {
  const auto report = run("reference-avx2.yaml");
  EXPECT_TRUE(report.pass);
  for (const auto& c : report.cases) EXPECT_EQ(c.greedy_identical, c.greedy_total) << c.name;
}

TEST(Oracle, NvmeProfilePassesItsThresholds) {
  const auto report = run("nvme.yaml");
  EXPECT_TRUE(report.pass);
}

// The demo profile's own thresholds hold on the random fixture too (on the
// trained models/glm-demo, tests/demo_model holds it to measured ones).
TEST(Oracle, DemoProfilePassesItsThresholds) {
  const auto report = run("demo.yaml");
  EXPECT_TRUE(report.pass);
}

}  // namespace
}  // namespace glmrt
