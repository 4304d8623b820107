// `glmrt bench --limits`: the drive and memory speeds measured before each
// run, and decode against the limits they set (the drive's GB/s over the
// expert bytes a step gets from it, memory's over the bytes a step reads).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shell_command.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

/// A profile whose every decode step misses experts: one slot per layer, no
/// pinned set, no read-ahead, no history (each run starts the same).
fs::path missing_profile(const fs::path& folder) {
  fs::create_directories(folder);
  const fs::path path = folder / "one-slot.yaml";
  std::ofstream(path) << "plugins: {kernels: kernels-scalar, io: io-buffered, draft: none}\n"
                         "precision: {dense: f32, experts: f32, kv_cache: f32}\n"
                         "memory: {budget: 0, expert_cache: 1, pinned: 0, prefetch: 0, "
                         "history: off, max_context: 256}\n";
  return path;
}

double rel_diff(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(b), 1e-300);
}

TEST(BenchLimits, ReportsDecodeAgainstTheDriveAndMemoryLimitsOfEachRun) {
  const fs::path folder = fs::temp_directory_path() / fmt::format("glmrt-limits-{}", ::getpid());
  const fs::path profile = missing_profile(folder);
  const auto [status, out] =
      test::run_shell(fmt::format("{0}/glmrt bench --json --limits --limits-memory 256MiB --evict "
                                  "--reps 2 --new-tokens 6 --model "
                                  "{1}/tests/fixtures/glm_tiny --profile {2} 2>/dev/null",
                                  GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, profile.string()));
  fs::remove_all(folder);
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["limits"], true);
  const auto& series = j["profiles"][0];
  ASSERT_EQ(series["runs"].size(), 2u);
  uint64_t model_bytes = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(GLMRT_SOURCE_DIR) / "tests/fixtures/glm_tiny"))
    if (entry.is_regular_file()) model_bytes += entry.file_size();
  for (const auto& r : series["runs"]) {
    const double drive = r["drive_gb_per_s"], memory = r["memory_gb_per_s"];
    EXPECT_GT(drive, 0);
    EXPECT_GT(memory, 0);
    // One slot per layer and four experts per token: every step reads, and
    // what it reads is part of what the run read.
    const double missed = r["step_missed_bytes"], touched = r["step_touched_bytes"];
    const double decode_tokens = r["decode_tokens"];
    EXPECT_GT(r["decode_misses"].get<double>(), 0);
    EXPECT_GT(missed, 0);
    EXPECT_LE(missed * decode_tokens, r["bytes_read"].get<double>());
    // A step reads at least the f32 lm_head (1024 x 64) and at most every
    // weight of the model once, widened from bf16 to f32.
    EXPECT_GT(touched, 1024.0 * 64 * 4);
    EXPECT_LT(touched, 2.0 * static_cast<double>(model_bytes));
    const double drive_limit = r["drive_limit_tokens_per_s"];
    const double memory_limit = r["memory_limit_tokens_per_s"];
    EXPECT_LT(rel_diff(drive_limit, drive * 1e9 / missed), 1e-9);
    EXPECT_LT(rel_diff(memory_limit, memory * 1e9 / touched), 1e-9);
    const double decode = r["decode_tokens_per_s"];
    EXPECT_LT(rel_diff(r["of_drive_limit"].get<double>(), decode / drive_limit), 1e-9);
    EXPECT_LT(rel_diff(r["of_memory_limit"].get<double>(), decode / memory_limit), 1e-9);
  }
  // The medians carry the same figures (two runs: the mean of both).
  const auto& runs = series["runs"];
  const double mean_of_drive =
      50 * (runs[0]["of_drive_limit"].get<double>() + runs[1]["of_drive_limit"].get<double>());
  EXPECT_LT(rel_diff(series["median"]["of drive limit (%)"].get<double>(), mean_of_drive), 1e-9);
  EXPECT_TRUE(series["median"]["DRAM limit (tokens/s)"].is_number());
}

TEST(BenchLimits, AreMeasuredOnlyWhenAskedAndTheTableShowsThemThen) {
  const std::string command = fmt::format(
      "{0}/glmrt bench --reps 1 --new-tokens 2 --model {1}/tests/fixtures/glm_tiny "
      "--profile {1}/configs/reference.yaml",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR);
  const auto [plain_status, plain] = test::run_shell(command + " --json 2>/dev/null");
  ASSERT_EQ(plain_status, 0) << plain;
  const nlohmann::json j = nlohmann::json::parse(plain);
  EXPECT_EQ(j["limits"], false);
  const auto& run = j["profiles"][0]["runs"][0];
  for (const char* key : {"drive_gb_per_s", "memory_gb_per_s", "drive_limit_tokens_per_s",
                          "memory_limit_tokens_per_s", "of_drive_limit", "of_memory_limit"})
    EXPECT_TRUE(run[key].is_null()) << key;
  EXPECT_GT(run["step_touched_bytes"].get<double>(), 0);  // counted either way

  const auto [table_status, table] = test::run_shell(command + " 2>/dev/null");
  ASSERT_EQ(table_status, 0) << table;
  EXPECT_THAT(table, Not(HasSubstr("DRAM limit")));
  const auto [limits_status, limits] =
      test::run_shell(command + " --limits --limits-memory 256MiB 2>/dev/null");
  ASSERT_EQ(limits_status, 0) << limits;
  EXPECT_THAT(limits, HasSubstr("limits measured before each run"));
  EXPECT_THAT(limits, HasSubstr("drive, raw O_DIRECT (GB/s)"));
  EXPECT_THAT(limits, HasSubstr("memory read (GB/s)"));
  EXPECT_THAT(limits, HasSubstr("DRAM limit (tokens/s)"));
  EXPECT_THAT(limits, HasSubstr("of DRAM limit (%)"));
  EXPECT_THAT(limits, HasSubstr("of drive limit (%)"));
}

TEST(BenchLimits, RefusesAMemoryBufferTheCachesWouldHold) {
  const auto [status, out] = test::run_shell(
      fmt::format("{0}/glmrt bench --limits --limits-memory 64KiB --reps 1 --new-tokens 2 --model "
                  "{1}/tests/fixtures/glm_tiny --profile {1}/configs/reference.yaml 2>&1",
                  GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR));
  EXPECT_NE(status, 0);
  EXPECT_THAT(out, HasSubstr("--limits-memory: 64KiB is under 1 MiB"));
  const auto [bad_status, bad] = test::run_shell(fmt::format(
      "{0}/glmrt bench --limits --limits-memory lots --reps 1 --model {1}/tests/fixtures/glm_tiny "
      "--profile {1}/configs/reference.yaml 2>&1",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR));
  EXPECT_NE(bad_status, 0);
  EXPECT_THAT(bad, HasSubstr("--limits-memory"));
}

}  // namespace
}  // namespace glmrt
