// `glmrt stats`, `glmrt run --record-routing` and `glmrt profile check
// --model` as a user runs them, each test with a cache folder of its own.
#include "glmrt_process.h"
#include "temp_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

namespace glmrt {
namespace {

using test::run_glmrt;
using test::TempFolder;
using ::testing::HasSubstr;
using ::testing::Not;

/// Points XDG_CACHE_HOME (inherited by glmrt) at a fresh folder.
class StatsCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("XDG_CACHE_HOME");
    saved_ = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("XDG_CACHE_HOME", dir_.path().c_str(), 1);
  }
  void TearDown() override {
    if (saved_)
      ::setenv("XDG_CACHE_HOME", saved_->c_str(), 1);
    else
      ::unsetenv("XDG_CACHE_HOME");
  }
  test::ProcessResult run_tiny(const std::string& ids, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"run",
                                  "--profile",
                                  test::reference_profile(),
                                  "--model",
                                  test::tiny_model(),
                                  "--prompt-ids",
                                  ids,
                                  "-n",
                                  "6",
                                  "--ignore-eos"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_glmrt(args);
  }
  TempFolder dir_;
  std::optional<std::string> saved_;
};

/// The selections column of `layer`'s summary row (-1 when absent). Parsed
/// by hand: GCC 12's std::regex trips -Werror in the sanitizer build.
long selections_of(const std::string& out, const std::string& layer) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string first;
    long selections = -1;
    if (fields >> first && first == layer && fields >> selections) return selections;
  }
  return -1;
}

/// The number before " pinned hits" on the `expert lookups:` line, or -1.
long pinned_hits_of(const std::string& err) {
  constexpr std::string_view kLookups = "expert lookups: ";
  const size_t at = err.find(kLookups);
  if (at == std::string::npos) return -1;
  std::istringstream fields(err.substr(at + kLookups.size()));
  long hits = -1;
  std::string word;
  return fields >> hits >> word && word == "pinned" ? hits : -1;
}

TEST_F(StatsCommand, RunBuildsAHistoryWithEveryMoeLayer) {
  const auto before = run_glmrt({"stats", "--model", test::tiny_model()});
  ASSERT_EQ(before.exit_status, 0) << before.err;
  EXPECT_THAT(before.out, HasSubstr("no selections recorded yet"));
  const auto run = run_tiny("1,2,3,4");
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const auto stats = run_glmrt({"stats", "--model", test::tiny_model()});
  ASSERT_EQ(stats.exit_status, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr(dir_.path().string()));
  // glm_tiny: layer 0 dense, 1-3 MoE. 4 prompt + 5 decoded positions, top-4.
  for (const char* layer : {"1", "2", "3"})
    EXPECT_EQ(selections_of(stats.out, layer), 36) << stats.out;
  EXPECT_THAT(stats.out, HasSubstr("heatmap: "));
  // Two more runs: counts add up.
  ASSERT_EQ(run_tiny("5,6").exit_status, 0);
  const auto more = run_glmrt({"stats", "--model", test::tiny_model()});
  EXPECT_EQ(selections_of(more.out, "2"), 36 + 7 * 4) << more.out;
  // Export, reset, import back.
  const auto stats_file = dir_.path() / "seed.stats";
  ASSERT_EQ(run_glmrt({"stats", "--model", test::tiny_model(), "--export", stats_file.string()})
                .exit_status,
            0);
  ASSERT_EQ(run_glmrt({"stats", "--model", test::tiny_model(), "--reset"}).exit_status, 0);
  EXPECT_THAT(run_glmrt({"stats", "--model", test::tiny_model()}).out,
              HasSubstr("no selections recorded yet"));
  const auto imported =
      run_glmrt({"stats", "--model", test::tiny_model(), "--import", stats_file.string()});
  ASSERT_EQ(imported.exit_status, 0) << imported.err;
  EXPECT_EQ(selections_of(imported.out, "2"), 36 + 7 * 4) << imported.out;
}

TEST_F(StatsCommand, HistoryOffWritesNothing) {
  const auto profile = dir_.path() / "off.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {history: off}\n";
  const auto run = run_glmrt({"run", "--profile", profile.string(), "--model", test::tiny_model(),
                              "--prompt-ids", "1,2", "-n", "2"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "glmrt"));
}

TEST_F(StatsCommand, RecordedTracesReplayThroughThePolicies) {
  const auto learn = dir_.path() / "learn.trace", test_trace = dir_.path() / "test.trace";
  ASSERT_EQ(run_tiny("1,2,3,4", {"--record-routing", learn.string()}).exit_status, 0);
  ASSERT_EQ(run_tiny("9,8,7", {"--record-routing", test_trace.string()}).exit_status, 0);
  const auto plot = dir_.path() / "curve.svg";
  const auto r = run_glmrt({"stats", "--replay", test_trace.string(), "--learn", learn.string(),
                            "--sizes", "1,2,4,8", "--plot", plot.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("LRU"));
  EXPECT_THAT(r.out, HasSubstr("Belady (cold)"));
  EXPECT_THAT(r.out, HasSubstr("Belady (warm)"));
  EXPECT_THAT(r.out, HasSubstr("pinned/warm"));
  EXPECT_THAT(r.out, HasSubstr("pinned 75% + LRU"));
  EXPECT_TRUE(std::filesystem::file_size(plot) > 200);
}

TEST_F(StatsCommand, ProfileCheckPrintsTheMemoryPlan) {
  const auto ok =
      run_glmrt({"profile", "check", test::reference_profile(), "--model", test::tiny_model()});
  ASSERT_EQ(ok.exit_status, 0) << ok.err;
  for (const char* part : {"process overhead", "resident dense weights", "KV cache at max_context",
                           "I/O slots and prefetch", "activations and logits", "pinned experts",
                           "expert LRU cache", "minimum"})
    EXPECT_THAT(ok.out, HasSubstr(part));
  const auto profile = dir_.path() / "small.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {budget: 2MiB}\n";
  const auto small =
      run_glmrt({"profile", "check", profile.string(), "--model", test::tiny_model()});
  EXPECT_EQ(small.exit_status, 1);
  EXPECT_THAT(small.err, HasSubstr("below the minimum"));
  EXPECT_THAT(small.err, HasSubstr("2 MiB given"));
}

TEST_F(StatsCommand, ProfileCheckPrintsEachRanksPlan) {
  const auto profile = dir_.path() / "ranks.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {expert_cache: 16, history: off, budget: 1GiB}\n";
  const auto r = run_glmrt(
      {"profile", "check", profile.string(), "--model", test::tiny_model(), "--ranks", "3"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ranks:     3 (expert parallelism; shards by expert id)"));
  for (const char* rank : {"rank 0:    the whole model", "rank 1:    routed experts only",
                           "rank 2:    routed experts only"})
    EXPECT_THAT(r.out, HasSubstr(rank));
  // glm_tiny's 16 experts of a layer over 3 ranks: no rank keeps 16 of a layer,
  // and the expert ranks hold no dense weights or KV cache.
  EXPECT_THAT(r.out, Not(HasSubstr("16 experts x 4 MoE layers")));
  EXPECT_THAT(r.out, HasSubstr("rank 0 holds it (this rank runs routed experts only)"));
  const auto bad = run_glmrt(
      {"profile", "check", profile.string(), "--model", test::tiny_model(), "--ranks", "0"});
  EXPECT_EQ(bad.exit_status, 1);
  EXPECT_THAT(bad.err, HasSubstr("--ranks expects a number of processes"));
}

TEST_F(StatsCommand, ProfileCheckSaysWhichMemoryPartsAreAuto) {
  const auto profile = dir_.path() / "auto.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {budget: auto, expert_cache: auto, pinned: 0}\n";
  const auto r = run_glmrt({"profile", "check", profile.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("budget auto, expert_cache auto, pinned off"));
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {budget: 1GiB, expert_cache: 3, pinned: 2MiB}\n";
  const auto fixed = run_glmrt({"profile", "check", profile.string()});
  ASSERT_EQ(fixed.exit_status, 0) << fixed.err;
  EXPECT_THAT(fixed.out, HasSubstr("budget 1 GiB, expert_cache 3 per layer, pinned 2 MiB"));
}

TEST_F(StatsCommand, ProfileCheckPrintsTheSettingsTheEngineResolves) {
  const auto profile = dir_.path() / "resolved.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\nthreads: 3\n"
                            "memory: {expert_cache: auto, history: off}\n";
  const auto r = run_glmrt({"profile", "check", profile.string(), "--model", test::tiny_model()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // memory.prefetch auto: glm_tiny's 4 experts per token; expert_cache auto
  // without a budget to size it from: the default.
  EXPECT_THAT(r.out, HasSubstr("resolved:  3 threads, prefetch 4 per layer (auto: each layer's "
                               "depth chosen as it runs), expert_cache 16 per layer (auto), "
                               "history off"));
}

}  // namespace
}  // namespace glmrt

namespace glmrt {
namespace {

TEST_F(StatsCommand, ValidatePassesWithPinningActive) {
  // A history first, so there is something to pin.
  ASSERT_EQ(run_tiny("1,2,3,4,5,6,7,8").exit_status, 0);
  const auto profile = dir_.path() / "pinned.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {expert_cache: 2, pinned: 256KiB}\n";
  const auto v = run_glmrt({"validate", "--profile", profile.string(), "--model",
                            test::tiny_model(), "--ref", test::tiny_model() + "/ref.json"});
  EXPECT_EQ(v.exit_status, 0) << v.out << v.err;
  // 256 KiB holds 10 f32 experts of 24 KiB; they served lookups.
  EXPECT_THAT(v.err, HasSubstr("pinned set: 10 experts"));
  EXPECT_GT(pinned_hits_of(v.err), 0) << v.err;
}

}  // namespace
}  // namespace glmrt

namespace glmrt {
namespace {

// A pinned set changes every figure bench prints, so the table and the JSON
// say, per profile, whether one was on and how big it was.
TEST_F(StatsCommand, BenchSaysWhetherPinningWasOn) {
  ASSERT_EQ(run_tiny("1,2,3,4,5,6,7,8").exit_status, 0);  // a history to pin from
  const auto off = dir_.path() / "off.yaml", on = dir_.path() / "on.yaml";
  std::ofstream(off) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                        "memory: {expert_cache: 2, pinned: 0}\n";
  std::ofstream(on) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                       "memory: {expert_cache: 2, pinned: 256KiB}\n";
  const std::vector<std::string> args{
      "bench",     "--reps",     "1",         "--new-tokens", "2", "--model", test::tiny_model(),
      "--profile", off.string(), "--profile", on.string()};
  const auto table = run_glmrt(args);
  ASSERT_EQ(table.exit_status, 0) << table.err;
  // 256 KiB holds 10 f32 experts of 24 KiB.
  EXPECT_THAT(table.out, HasSubstr(off.string() + "; pinning: off\n"));
  EXPECT_THAT(table.out, HasSubstr(on.string() + "; pinning: on (10 experts, 240 KiB)\n"));
  auto json_args = args;
  json_args.push_back("--json");
  const auto json = run_glmrt(json_args);
  ASSERT_EQ(json.exit_status, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"pinning\":\"off\""));
  EXPECT_THAT(json.out, HasSubstr("\"pinning\":\"on (10 experts, 240 KiB)\""));
  EXPECT_THAT(json.out, HasSubstr("\"pinned_experts\":10"));
}

// Each run adds to the history, so a profile's first run on a fresh history
// pins nothing and the next one does: the table says which run had what.
TEST_F(StatsCommand, BenchTellsRunsWithAndWithoutPinningApart) {
  const auto on = dir_.path() / "on.yaml";
  std::ofstream(on) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                       "memory: {expert_cache: 2, pinned: 256KiB}\n";
  const auto r = run_glmrt({"bench", "--reps", "2", "--new-tokens", "2", "--model",
                            test::tiny_model(), "--profile", on.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("; pinning: off in run 1, on (10 experts, 240 KiB) in run 2\n"));
}

}  // namespace
}  // namespace glmrt

namespace glmrt {
namespace {

/// `command` run by /bin/sh with stdout and stderr into one pipe; the text
/// ends with the line "exit=N".
std::string shell_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1; echo \"exit=$?\"").c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

TEST_F(StatsCommand, RecordRoutingOntoDevFullFailsNamingWhy) {
  const auto r = run_tiny("1,2,3", {"--record-routing", "/dev/full"});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_THAT(r.err, HasSubstr("/dev/full"));
  EXPECT_THAT(r.err, HasSubstr("a character device"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("Success")));
}

TEST_F(StatsCommand, RecordRoutingOnAFullDiskFailsAndLeavesNoTrace) {
  // The disk "fills" after 8-16 KB (a file size limit: write(2) fails with
  // EFBIG as it fails with ENOSPC on a full disk); a 1000-token prompt's
  // trace is longer than that.
  const auto trace = dir_.path() / "full.trace";
  std::ostringstream ids;  // (GCC 12 warns falsely on `"," + std::to_string(i)`)
  ids << 1;
  for (int i = 2; i <= 1000; ++i) ids << ',' << i;
  std::ostringstream command;
  command << "(trap '' XFSZ; ulimit -f 16; exec " << GLMRT_EXECUTABLE << " run --profile "
          << test::reference_profile() << " --model " << test::tiny_model() << " --prompt-ids "
          << ids.str() << " -n 1 --record-routing " << trace.string() << ")";
  const std::string out = shell_output(command.str());
  EXPECT_THAT(out, HasSubstr("writing the routing trace failed"));
  EXPECT_THAT(out, HasSubstr(std::strerror(EFBIG)));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("failed: Success")));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("exit=0")));
  EXPECT_FALSE(std::filesystem::exists(trace));
  for (const auto& e : std::filesystem::directory_iterator(dir_.path()))
    EXPECT_EQ(e.path().extension(), "") << "left behind: " << e.path();
}

TEST_F(StatsCommand, RecordRoutingOntoAModelShardIsRefused) {
  // The model folder holds links to the fixture's files: a regression
  // replaces a link, never the fixture.
  const auto model = dir_.path() / "model";
  std::filesystem::create_directory(model);
  for (const auto& e : std::filesystem::directory_iterator(test::tiny_model()))
    std::filesystem::create_symlink(e.path(), model / e.path().filename());
  const auto shard = model / "model-00001-of-00003.safetensors";
  const auto r =
      run_glmrt({"run", "--profile", test::reference_profile(), "--model", model.string(),
                 "--prompt-ids", "1,2", "-n", "1", "--record-routing", shard.string()});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_THAT(r.err, HasSubstr("inside the model directory"));
  EXPECT_TRUE(std::filesystem::is_symlink(shard));
  // An existing file that is no trace is refused too.
  const auto notes = dir_.path() / "notes.txt";
  std::ofstream(notes) << "mine\n";
  const auto n = run_tiny("1,2", {"--record-routing", notes.string()});
  EXPECT_NE(n.exit_status, 0);
  EXPECT_THAT(n.err, HasSubstr("is not a routing trace"));
  std::ifstream kept(notes);
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "mine");
}

TEST_F(StatsCommand, ReplayRefusesACutTrace) {
  const auto trace = dir_.path() / "t.trace";
  ASSERT_EQ(run_tiny("1,2,3", {"--record-routing", trace.string()}).exit_status, 0);
  ASSERT_EQ(
      run_glmrt({"stats", "--replay", trace.string(), "--model", test::tiny_model()}).exit_status,
      0);
  // Cut in the middle of its last step line.
  const auto size = std::filesystem::file_size(trace);
  std::filesystem::resize_file(trace, size - 12);
  const auto r = run_glmrt({"stats", "--replay", trace.string()});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_THAT(r.err, HasSubstr(trace.string()));
  EXPECT_THAT(r.err, HasSubstr("cut short"));
}

TEST_F(StatsCommand, ImportRefusesCountsThatWouldWrap) {
  const auto file = dir_.path() / "big.stats";
  std::ofstream(file) << "1 0 9223372036854775807\n1 0 9223372036854775807\n"
                         "1 0 9223372036854775807\n";
  const auto r = run_glmrt({"stats", "--model", test::tiny_model(), "--import", file.string()});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_THAT(r.err, HasSubstr(file.string() + ":3"));
  EXPECT_THAT(r.err, HasSubstr("2^64 - 1"));
  EXPECT_THAT(run_glmrt({"stats", "--model", test::tiny_model()}).out,
              HasSubstr("no selections recorded yet"));
}

}  // namespace
}  // namespace glmrt
