// Cache-aware routing (routing.cache_bias) end to end on glm_tiny: 0 leaves
// every result and report as it was; a positive bias substitutes experts
// that are in RAM where the cache is small, only in decode steps, and says
// so in validate --against, validate --json and run.
#include <glmrt/engine/engine.h>
#include <glmrt/validate/profile_comparison.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "checkpoint_generator.h"
#include "shell_command.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
const fs::path kTinyModel = fs::path(GLMRT_FIXTURES) / "glm_tiny";

std::string reference_profile_text() {
  std::ifstream in(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The reference profile with a small LRU (2 of 16 experts per layer, no
/// read-ahead, no pinned set, no history): residency differs from step to
/// step, so a bias has something to choose between.
Profile small_cache_profile(double cache_bias) {
  Profile profile = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
  profile.plugin_paths.insert(profile.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  profile.routing.cache_bias = cache_bias;
  profile.expert_cache_per_layer = 2;
  profile.prefetch_slots = 0;
  profile.pinned_bytes = 0;
  profile.history = false;
  return profile;
}

std::vector<int32_t> sample_ids(int n) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>(1 + (i * 37) % 200));
  return ids;
}

class CacheBiasTest : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& text) {
    const fs::path file = dir_.path() / name;
    std::ofstream(file) << text;
    return file;
  }
  test::ScratchDir dir_{"glmrt-cache-bias"};
};

TEST_F(CacheBiasTest, ZeroLeavesTheValidateReportByteIdentical) {
  // prefetch: auto chooses its depth from the drive's timing, so its misses
  // differ from run to run; without read-ahead every counter is deterministic.
  std::string without_read_ahead = reference_profile_text();
  const std::string cache_line = "  expert_cache: 16\n";
  without_read_ahead.replace(without_read_ahead.find(cache_line), cache_line.size(),
                             cache_line + "  prefetch: 0\n");
  const fs::path exact_profile = write("exact.yaml", without_read_ahead);
  const fs::path zero =
      write("zero.yaml", without_read_ahead + "routing:\n  cache_bias: 0\n");
  const auto report = [&](const fs::path& profile, const std::string& cache) {
    return test::run_shell(fmt::format(
        "XDG_CACHE_HOME={} {}/glmrt validate --profile {} --model {} --ref {} --json 2>/dev/null",
        (dir_.path() / cache).string(), GLMRT_BUILD_DIR, profile.string(), kTinyModel.string(),
        (kTinyModel / "ref.json").string()));
  };
  const auto [status_exact, exact] = report(exact_profile, "a");
  const auto [status_zero, with_zero] = report(zero, "b");
  EXPECT_EQ(status_exact, 0);
  EXPECT_EQ(status_zero, 0);
  // Every field but the drives' timings (seconds busy and waited) is
  // deterministic without read-ahead.
  const auto without_timings = [](const std::string& text) {
    nlohmann::json report = nlohmann::json::parse(text);
    for (nlohmann::json& rank : report.at("rank_experts")) {
      rank.erase("busy_seconds");
      rank.erase("wait_seconds");
    }
    return report.dump(2);
  };
  EXPECT_EQ(without_timings(with_zero), without_timings(exact));
  EXPECT_EQ(with_zero.find("cache_bias"), std::string::npos);
}

TEST_F(CacheBiasTest, ZeroRoutesExactlyWithASmallCache) {
  auto zero = Engine::open(small_cache_profile(0), kTinyModel);
  auto reference = Engine::open(small_cache_profile(0), kTinyModel);
  const ProfileComparison c = compare_profiles(*zero, *reference, sample_ids(24), 64, 0);
  EXPECT_FALSE(c.cache_bias_q.on());
  EXPECT_EQ(c.mean_kl, 0.0);  // bit-identical logits
  EXPECT_EQ(c.same_top1, 1.0);
  EXPECT_EQ(zero->model().cache_bias().substitutions, 0);
}

TEST_F(CacheBiasTest, APositiveBiasSubstitutesInDecodeStepsAndCostsSomething) {
  auto biased = Engine::open(small_cache_profile(0.5), kTinyModel);
  auto exact = Engine::open(small_cache_profile(0), kTinyModel);
  const std::vector<int32_t> ids = sample_ids(24);
  const ProfileComparison c = compare_profiles(*biased, *exact, ids, 64, 0);
  ASSERT_TRUE(c.cache_bias_q.on());
  EXPECT_FALSE(c.cache_bias_p.on());
  EXPECT_EQ(c.cache_bias_q.bias, 0.5);
  EXPECT_EQ(c.cache_bias_q.rows, static_cast<int64_t>(ids.size()));  // one decode step each
  // 3 MoE layers x 4 experts per position.
  EXPECT_EQ(c.cache_bias_q.choices, c.cache_bias_q.rows * 3 * 4);
  EXPECT_GT(c.cache_bias_q.substitutions, 0);
  EXPECT_LE(c.cache_bias_q.substitutions, c.cache_bias_q.choices);
  EXPECT_GT(c.mean_kl, 0.0);
  // Outside decode steps (a prompt's prefill) the routing is exact.
  auto prefill_only = Engine::open(small_cache_profile(0.5), kTinyModel);
  KvCache cache = prefill_only->new_cache();
  prefill_only->model().forward(cache, ids);
  EXPECT_EQ(prefill_only->model().cache_bias().rows, 0);
  EXPECT_EQ(prefill_only->model().cache_bias().substitutions, 0);
}

TEST_F(CacheBiasTest, CommandsSayWhenItIsOn) {
  const std::string small =
      "memory:\n  expert_cache: 2\n  prefetch: 0\n  pinned: 0\n  history: off\n";
  std::string text = reference_profile_text();
  text = text.substr(0, text.find("memory:")) + small +
         text.substr(text.find("generation:"));  // the reference profile, small cache
  const fs::path biased = write("biased.yaml", text + "routing: {cache_bias: 0.5}\n");
  const fs::path exact = write("exact.yaml", text);
  std::string ids;
  for (int32_t id : sample_ids(16)) ids += fmt::format("{} ", id);
  const fs::path ids_file = write("ids.txt", ids);
  const auto against = [&](const fs::path& q) {
    return test::run_shell(fmt::format(
        "{}/glmrt validate --profile {} --against {} --model {} --ids {} --json 2>/dev/null",
        GLMRT_BUILD_DIR, q.string(), exact.string(), kTinyModel.string(), ids_file.string()));
  };
  const auto [status, out] = against(biased);
  EXPECT_EQ(status, 0);
  const nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_TRUE(j.contains("cache_bias")) << out;
  EXPECT_EQ(j["cache_bias"]["bias"], 0.5);
  EXPECT_EQ(j["cache_bias"]["decode_positions"], 16);
  EXPECT_GT(j["cache_bias"]["substitutions"].get<int64_t>(), 0);
  EXPECT_FALSE(j.contains("cache_bias_against"));
  EXPECT_GT(j["mean_kl"].get<double>(), 0.0);
  const auto [status_exact, out_exact] = against(exact);
  EXPECT_EQ(status_exact, 0);
  EXPECT_FALSE(nlohmann::json::parse(out_exact).contains("cache_bias"));

  // run: its own line; the prompt is routed exactly, the 7 decode steps are not.
  const auto [run_status, run_err] = test::run_shell(fmt::format(
      "{}/glmrt run --profile {} --model {} --prompt-ids 1,2,3,4,5 -n 8 --ignore-eos 2>&1 "
      ">/dev/null",
      GLMRT_BUILD_DIR, biased.string(), kTinyModel.string()));
  EXPECT_EQ(run_status, 0) << run_err;
  EXPECT_NE(run_err.find("cache_bias: 0.5 (routing not exact): "), std::string::npos) << run_err;
  EXPECT_NE(run_err.find(" in 7 decode positions"), std::string::npos) << run_err;
  EXPECT_NE(run_err.find("decode: 7 tokens"), std::string::npos) << run_err;
}

}  // namespace
}  // namespace glmrt
