// `glmrt bench --json`: with no other option it runs configs/reference.yaml
// against configs/nvme.yaml on tests/fixtures/glm_tiny and prints one JSON
// value; `glmrt run` keeps its first report line and adds the expert figures.
#include <glmrt/base/huge_pages.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shell_command.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace glmrt {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(BenchCommand, JsonRunsReferenceAgainstNvmeOnTheTinyModelByDefault) {
  const auto [status, out] = test::run_shell(
      fmt::format("cd {} && {}/glmrt bench --json --reps 2 --new-tokens 6 2>/dev/null",
                  GLMRT_SOURCE_DIR, GLMRT_BUILD_DIR));
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);  // throws unless stdout is one JSON value
  EXPECT_THAT(j["model"].get<std::string>(), HasSubstr("tests/fixtures/glm_tiny"));
  EXPECT_EQ(j["prompt"].size(), 8u);
  EXPECT_EQ(j["reps"], 2);
  ASSERT_EQ(j["profiles"].size(), 2u);
  EXPECT_THAT(j["profiles"][0]["profile"].get<std::string>(), HasSubstr("reference.yaml"));
  EXPECT_THAT(j["profiles"][1]["profile"].get<std::string>(), HasSubstr("nvme.yaml"));
  for (const auto& p : j["profiles"]) {
    ASSERT_EQ(p["runs"].size(), 2u);
    for (const char* key : {"load (s)",
                            "prefill (tokens/s)",
                            "decode (tokens/s)",
                            "read (GB)",
                            "disk (GB/s)",
                            "cache hit rate (%)",
                            "prefetch accuracy (%)",
                            "peak RSS (MiB)",
                            "step: waiting on disk (ms)",
                            "step: expert matmuls (ms)",
                            "step: attention (ms)",
                            "step: other (ms)",
                            "step: fresh slot memory (MB)",
                            "slots faulted in ahead (MB)",
                            "pinned experts (0 = off)",
                            "pinned hits (lookups)",
                            "LRU hits (lookups)",
                            "misses (lookups)",
                            "urgent reads (misses)",
                            "cancelled reads (guesses)",
                            "drafts verified (per run)",
                            "drafts accepted (per run)",
                            "draft acceptance (%)",
                            "tokens per forward (decode)"})
      EXPECT_TRUE(p["median"].contains(key)) << key;
    for (const auto& r : p["runs"]) {
      EXPECT_EQ(r["tokens"].size(), 6u);
      EXPECT_EQ(r["prefill_tokens"], 8);
      EXPECT_EQ(r["decode_tokens"], 5);
      EXPECT_GT(r["decode_tokens_per_s"].get<double>(), 0);
      EXPECT_GT(r["peak_rss_bytes"].get<double>(), 0);
      // io ABI 1.6 (the in-tree plugins): every miss is read urgent.
      EXPECT_EQ(r["urgent_reads"], r["misses"]);
      EXPECT_TRUE(r.contains("cancelled_reads") && r.contains("cancelled_bytes")) << r.dump();
      // Issue 37's figures: the refined guesses' first ones, the next
      // token's first MoE layer, the drive's idle time between tokens.
      for (const char* key :
           {"first_guess_accuracy", "next_step_accuracy", "drive_idle_between_steps_ms"})
        EXPECT_TRUE(r.contains(key)) << key;
      // Slot memory the decode steps' reads faulted in: whole 4 KiB pages,
      // the per-step figure is that over the decode steps.
      const auto fresh = r["decode_fresh_slot_bytes"].get<uint64_t>();
      EXPECT_EQ(fresh % 4096, 0u);
      EXPECT_DOUBLE_EQ(r["step_fresh_slot_bytes"].get<double>(), fresh / 5.0);
      EXPECT_TRUE(r["warmed_slot_bytes"].is_number_unsigned()) << r.dump();
    }
    // Greedy and deterministic: every repetition of a profile says the same.
    EXPECT_EQ(p["runs"][0]["tokens"], p["runs"][1]["tokens"]);
  }
  // reference.yaml drafts nothing; nvme.yaml drafts with the MTP layer.
  const auto& plain = j["profiles"][0];
  EXPECT_TRUE(plain["runs"][0]["draft"].is_null());
  EXPECT_EQ(plain["median"]["tokens per forward (decode)"], 1.0);
  EXPECT_TRUE(plain["median"]["drafts verified (per run)"].is_null());
  for (const auto& r : j["profiles"][1]["runs"]) {
    ASSERT_TRUE(r["draft"].is_object()) << r.dump();
    EXPECT_GE(r["draft"]["forwards"].get<int>(), 1);
  }
}

TEST(BenchCommand, ReportsDraftStatsPerProfile) {
  // Fixed-length MTP drafts (p_min 0: always three) against none.
  const auto [status, out] = test::run_shell(fmt::format(
      "{0}/glmrt bench --json --reps 1 --new-tokens 8 --model {1}/tests/fixtures/glm_tiny "
      "--profile {1}/configs/reference.yaml --profile {1}/configs/reference-mtp.yaml 2>/dev/null",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR));
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j["profiles"].size(), 2u);
  const auto& none = j["profiles"][0];
  EXPECT_TRUE(none["runs"][0]["draft"].is_null());
  EXPECT_EQ(none["median"]["tokens per forward (decode)"], 1.0);
  const auto& mtp = j["profiles"][1];
  const auto& r = mtp["runs"][0];
  const auto& d = r["draft"];
  ASSERT_TRUE(d.is_object()) << r.dump();
  const int forwards = d["forwards"], decided = d["decided"];
  const int proposed = d["proposed"], accepted = d["accepted"];
  EXPECT_GE(forwards, 1);
  EXPECT_GE(proposed, forwards);  // three drafts a step (fewer only on the last)
  EXPECT_LE(accepted, proposed);
  // Every decoded token was decided by a forward, at least one per forward.
  EXPECT_LE(decided, r["decode_tokens"].get<int>());
  EXPECT_GE(decided, forwards);
  EXPECT_DOUBLE_EQ(d["tokens_per_forward"].get<double>(), double(decided) / double(forwards));
  EXPECT_EQ(mtp["median"]["drafts verified (per run)"], proposed);
  EXPECT_EQ(mtp["median"]["drafts accepted (per run)"], accepted);
  EXPECT_DOUBLE_EQ(mtp["median"]["tokens per forward (decode)"].get<double>(),
                   d["tokens_per_forward"].get<double>());
  // Drafting changes no greedy token.
  EXPECT_EQ(r["tokens"], none["runs"][0]["tokens"]);
}

TEST(BenchCommand, TableNamesEachProfile) {
  const auto [status, out] = test::run_shell(fmt::format(
      "{0}/glmrt bench --reps 1 --new-tokens 2 --evict --model {1}/tests/fixtures/glm_tiny "
      "--profile {1}/configs/reference.yaml 2>/dev/null",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR));
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("page cache evicted"));
  EXPECT_THAT(out, HasSubstr("decode (tokens/s)"));
  EXPECT_THAT(out, HasSubstr("step: waiting on disk (ms)"));
  EXPECT_THAT(out, HasSubstr("tokens per forward (decode)"));
  EXPECT_THAT(out, HasSubstr("[1] " + std::string(GLMRT_SOURCE_DIR) + "/configs/reference.yaml"));
}

// A GGUF model is its file (or its shards): --evict drops those from the page
// cache and bench runs the file as it does a folder.
TEST(BenchCommand, EvictsAGgufModelsFile) {
  const auto [status, out] = test::run_shell(fmt::format(
      "{0}/glmrt bench --reps 1 --new-tokens 2 --evict --model "
      "{1}/tests/fixtures/gguf/glm_dsa-Q4_K_M.gguf --profile {1}/configs/gguf.yaml 2>&1",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR));
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("page cache evicted"));
  EXPECT_THAT(out, Not(HasSubstr("cannot evict")));
  EXPECT_THAT(out, HasSubstr("decode (tokens/s)"));
}

// After an untimed pass in the same engine, a cache that holds all of
// glm_tiny's experts (reference.yaml keeps 16 per layer) has every expert the
// timed pass needs (a read ahead queued at the end of the warm-up may still
// land and be counted during it).
TEST(BenchCommand, WarmupTimesASecondPassWithEveryExpertInRam) {
  const auto [status, out] = test::run_shell(
      fmt::format("{0}/glmrt bench --json --warmup --reps 1 --new-tokens 4 --model "
                  "{1}/tests/fixtures/glm_tiny --profile {1}/configs/reference.yaml 2>/dev/null",
                  GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR));
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["warmup"], true);
  const auto& run = j["profiles"][0]["runs"][0];
  EXPECT_EQ(run["cache_hit_rate"], 1.0);
  EXPECT_EQ(run["decode_tokens"], 3);
}

TEST(BenchCommand, ParallelStreamsReportAggregatePerStreamAndSharedExperts) {
  const auto [status, out] =
      test::run_shell(fmt::format("cd {} && {}/glmrt bench --json --reps 1 -n 5 "
                                  "--profile configs/reference.yaml --parallel 3 2>/dev/null",
                                  GLMRT_SOURCE_DIR, GLMRT_BUILD_DIR));
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["parallel"], 3);
  const auto& run = j["profiles"][0]["runs"][0];
  const auto& parallel = run["parallel"];
  ASSERT_TRUE(parallel.is_object()) << run.dump();
  EXPECT_EQ(parallel["streams"], 3);
  ASSERT_EQ(parallel["stream_decode_tokens_per_s"].size(), 3u);
  for (const auto& v : parallel["stream_decode_tokens_per_s"]) EXPECT_GT(v.get<double>(), 0);
  EXPECT_EQ(run["tokens"].size(), 15u);  // 5 per stream
  EXPECT_EQ(run["prefill_tokens"], 24);  // three 8-token prompts, one per step
  // A prompt per step, beside the others' decode rows: stream 0 decided 3
  // tokens by the end of the prompts, stream 1 two, stream 2 one; then 4
  // steps of decode rows only (3, 3, 2 and 1 rows).
  EXPECT_EQ(run["decode_tokens"], 9);
  EXPECT_EQ(parallel["decode_steps"], 4);
  // glm_tiny: 3 MoE layers x top-4 per position.
  EXPECT_EQ(parallel["one_stream_experts_per_step"], 12.0);
  const double resolved = parallel["experts_per_step"].get<double>();
  EXPECT_GE(resolved, 12.0);
  EXPECT_LE(resolved, 36.0);
  EXPECT_NEAR(parallel["of_separate_streams"].get<double>(), resolved / 36.0, 1e-9);
  EXPECT_GT(run["decode_tokens_per_s"].get<double>(), 0);
  EXPECT_TRUE(j["profiles"][0]["median"].contains("experts per step (resolved)"));

  // One stream through the batched loop gives plain bench's tokens.
  const auto [status1, out1] = test::run_shell(
      fmt::format("cd {} && {}/glmrt bench --json --reps 1 -n 5 --profile configs/reference.yaml "
                  "--parallel 1 2>/dev/null && {}/glmrt bench --json --reps 1 -n 5 --profile "
                  "configs/reference.yaml 2>/dev/null",
                  GLMRT_SOURCE_DIR, GLMRT_BUILD_DIR, GLMRT_BUILD_DIR));
  ASSERT_EQ(status1, 0) << out1;
  const auto newline = out1.find('\n');
  const nlohmann::json one = nlohmann::json::parse(out1.substr(0, newline));
  const nlohmann::json plain = nlohmann::json::parse(out1.substr(newline + 1));
  EXPECT_EQ(one["profiles"][0]["runs"][0]["tokens"], plain["profiles"][0]["runs"][0]["tokens"]);
  EXPECT_EQ(one["profiles"][0]["runs"][0]["tokens"],
            std::vector<int>(run["tokens"].begin(), run["tokens"].begin() + 5));
  EXPECT_TRUE(plain["profiles"][0]["runs"][0]["parallel"].is_null());
}

// With a drafting profile each stream drafts in the batch (a fixed policy:
// every step verifies what its drafter proposes): the tokens are the ones
// without drafting, and the report sums the streams' drafts.
TEST(BenchCommand, ParallelStreamsDraftWithTheProfilesDrafter) {
  const auto bench = [](const char* profile) {
    const auto [status, out] = test::run_shell(
        fmt::format("cd {} && {}/glmrt bench --json --reps 1 -n 6 --profile configs/{} "
                    "--parallel 2 2>/dev/null",
                    GLMRT_SOURCE_DIR, GLMRT_BUILD_DIR, profile));
    EXPECT_EQ(status, 0) << out;
    return nlohmann::json::parse(out)["profiles"][0]["runs"][0];
  };
  const nlohmann::json drafted = bench("reference-mtp.yaml");
  const nlohmann::json plain = bench("reference.yaml");
  EXPECT_EQ(drafted["tokens"], plain["tokens"]);
  ASSERT_TRUE(drafted["draft"].is_object()) << drafted.dump();
  EXPECT_GT(drafted["draft"]["proposed"].get<int64_t>(), 0);
  EXPECT_TRUE(plain["draft"].is_null());
}

TEST(BenchCommand, RefusesAParallelItCannotRun) {
  for (const char* flags :
       {"--parallel 0", "--parallel 300", "--same-prompt", "--parallel 2 --limits"}) {
    const auto [status, out] = test::run_shell(fmt::format(
        "cd {} && {}/glmrt bench --reps 1 -n 2 --profile configs/reference.yaml {} 2>&1",
        GLMRT_SOURCE_DIR, GLMRT_BUILD_DIR, flags));
    EXPECT_NE(status, 0) << flags;
    EXPECT_THAT(out, ContainsRegex("parallel")) << flags << ": " << out;
  }
}

TEST(RunCommand, KeepsItsReportLineAndAddsExpertFigures) {
  // An empty usage history: nothing pinned, so experts are read and read
  // ahead (a history that ranks every expert pins them all, and then no
  // read or prediction figure applies).
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / fmt::format("glmrt-run-report-{}", ::getpid());
  std::filesystem::create_directories(cache);
  const auto [status, out] = test::run_shell(fmt::format(
      "XDG_CACHE_HOME={2} {0}/glmrt run --profile {1}/configs/reference.yaml --model "
      "{1}/tests/fixtures/glm_tiny --prompt-ids 3,141,59 -n 4 --ignore-eos 2>&1 >/dev/null",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, cache.string()));
  std::filesystem::remove_all(cache);
  ASSERT_EQ(status, 0) << out;
  // gmock's regex is POSIX <regex.h>: GCC 12's std::regex fails -Werror in
  // the sanitizer build.
  EXPECT_THAT(out, ContainsRegex("\nprefill: 3 tokens \\(0 reused from the cache\\) in [0-9.]+ s "
                                 "\\([0-9.]+ tokens/s\\); decode: 3 tokens in [0-9.]+ s \\([0-9.]+ "
                                 "tokens/s\\)\n"));
  EXPECT_THAT(out, HasSubstr("expert reads: "));
  EXPECT_THAT(out, HasSubstr("overlap"));
  EXPECT_THAT(out, HasSubstr("prefetch: 4 slots per layer, depth auto: "));
  EXPECT_THAT(out, HasSubstr("accuracy"));
  // The in-tree io plugins are of ABI 1.6: misses go urgent, guesses may be cancelled.
  EXPECT_THAT(out, ContainsRegex("misses read urgent, [0-9]+ guesses cancelled \\([0-9.]+ MiB "
                                 "saved\\); drive idle between tokens [0-9.]+ ms per token\n"));
  // The refined guesses are the accuracy; the first ones and the next
  // token's first MoE layer are reported apart.
  EXPECT_THAT(out, ContainsRegex("\\(accuracy [0-9.]+%; first guesses [0-9.]+%\\); next token's "
                                 "first MoE layer: [0-9]+ predicted, [0-9]+ used"));
  EXPECT_THAT(out, HasSubstr("expert slots: 20 per layer"));
}

TEST(RunCommand, UnderABudgetLimitTheLoadReportSaysTheSlotsWereFaultedIn) {
  if (!HugePageBlock(4096, nullptr, "probe").populate())
    GTEST_SKIP() << "this kernel cannot populate (MADV_POPULATE_WRITE)";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("glmrt-run-warm-{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "p.yaml") << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                                   "precision: {dense: f32, experts: f32, kv_cache: f32}\n"
                                   "memory: {budget: 1GiB, expert_cache: 2, prefetch: 1, "
                                   "pinned: 0, history: off, max_context: 256}\n";
  const auto [status, out] = test::run_shell(fmt::format(
      "XDG_CACHE_HOME={2} {0}/glmrt run --profile {2}/p.yaml --model {1}/tests/fixtures/glm_tiny "
      "--prompt-ids 3,141,59 -n 2 --ignore-eos 2>&1 >/dev/null",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, dir.string()));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out,
              ContainsRegex("\nload: expert slots faulted in: [0-9.]+ [KMG]iB, waited [0-9.]+ s "
                            "of the opening for them\n"));
}

}  // namespace
}  // namespace glmrt
