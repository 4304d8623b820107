// Every file glmrt writes, as a user types the command (issue 34): stats
// --export/--heatmap/--replay --plot, calibrate --out, run --record-routing,
// convert --to and make-model --out refuse a model's file, a FIFO (named as
// one, and still a FIFO afterwards) and a user's file of another kind (left
// byte for byte as it was), --force replaces the last, and a write that fails
// (a file size limit: EFBIG, as ENOSPC on a full disk) is exit status 1
// leaving nothing behind.
#include "glmrt_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::run_glmrt;
using ::testing::HasSubstr;
using ::testing::Not;

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

/// `command` run by /bin/sh, stdout and stderr together; ends "exit=N".
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

constexpr const char* kProfileText = "memory:\n  budget: 4GiB\n";
constexpr const char* kNotes = "my notes\n";

/// A scratch folder with a model (links to glm_tiny's files: a regression
/// replaces a link, never the fixture), a profile, notes and a FIFO of the
/// user's; XDG_CACHE_HOME (the history) points inside it.
class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / ("glmrt-outputs-" + std::to_string(::getpid()) + "-XXXXXX"))
            .string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    model_ = dir_ / "model";
    profile_ = dir_ / "my-profile.yaml";
    notes_ = dir_ / "notes.txt";
    fifo_ = dir_ / "fifo";
    fs::create_directory(model_);
    for (const auto& e : fs::directory_iterator(test::tiny_model()))
      fs::create_symlink(e.path(), model_ / e.path().filename());
    put(profile_, kProfileText);
    put(notes_, kNotes);
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0);
    const char* old = std::getenv("XDG_CACHE_HOME");
    saved_cache_ = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    if (saved_cache_)
      ::setenv("XDG_CACHE_HOME", saved_cache_->c_str(), 1);
    else
      ::unsetenv("XDG_CACHE_HOME");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  /// The model's files and the user's are as SetUp left them.
  void expect_all_kept() {
    EXPECT_EQ(bytes_of(model_ / "config.json"),
              bytes_of(fs::path(test::tiny_model()) / "config.json"));
    for (const auto& e : fs::directory_iterator(model_)) EXPECT_TRUE(fs::is_symlink(e.path()));
    EXPECT_EQ(bytes_of(profile_), kProfileText);
    EXPECT_EQ(bytes_of(notes_), kNotes);
    EXPECT_TRUE(fs::is_fifo(fifo_));
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_THAT(e.path().filename().string(), Not(HasSubstr(".tmp"))) << "left behind";
  }
  /// `args` + `--flag target` is refused naming the target and `reason`.
  void expect_refused(std::vector<std::string> args, const std::string& flag,
                      const fs::path& target, const std::string& reason) {
    args.push_back(flag);
    args.push_back(target.string());
    const auto r = run_glmrt(args);
    EXPECT_EQ(r.exit_status, 1) << flag << ' ' << target << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(target.string()));
    EXPECT_THAT(r.err, HasSubstr(reason));
  }
  /// The refusals every writer makes: a model's shard, a FIFO,
  /// the user's profile and notes; `kind` is what it says they are not.
  void expect_every_refusal(const std::vector<std::string>& args, const std::string& flag,
                            const std::string& kind) {
    expect_refused(args, flag, model_ / "model-00002-of-00003.safetensors",
                   "inside the model directory");
    expect_refused(args, flag, fifo_, "a named pipe (FIFO)");
    expect_refused(args, flag, profile_, "exists and is not " + kind);
    expect_refused(args, flag, notes_, "exists and is not " + kind);
    expect_all_kept();
  }
  std::vector<std::string> calibrate_args() {
    put(dir_ / "text.txt", "The quick brown fox jumps over the lazy dog. It ran away.\n");
    return {"calibrate",
            "--profile",
            test::reference_profile(),
            "--model",
            model_.string(),
            "--text",
            (dir_ / "text.txt").string(),
            "--window",
            "8"};
  }
  fs::path dir_, model_, profile_, notes_, fifo_;
  std::optional<std::string> saved_cache_;
};

// A STATS file of glm_tiny's shape (layer 1 is its MoE layer).
constexpr const char* kStats = "1 0 5\n1 3 2\n";

TEST_F(OutputFiles, StatsExport) {
  const std::vector<std::string> args{"stats", "--model", model_.string()};
  expect_every_refusal(args, "--export", "a STATS file");
  expect_refused(args, "--export", model_ / "config.json", "inside the model directory");
  // With --force the profile is replaced by the export.
  put(dir_ / "seed.stats", kStats);
  auto with_force = args;
  with_force.insert(with_force.end(), {"--import", (dir_ / "seed.stats").string(), "--export",
                                       profile_.string(), "--force"});
  const auto r = run_glmrt(with_force);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(bytes_of(profile_), kStats);
  // An earlier export is replaced without it.
  const auto again =
      run_glmrt({"stats", "--model", model_.string(), "--export", profile_.string()});
  EXPECT_EQ(again.exit_status, 0) << again.err;
  EXPECT_EQ(bytes_of(profile_), kStats);
}

TEST_F(OutputFiles, StatsHeatmap) {
  const std::vector<std::string> args{"stats", "--model", model_.string()};
  expect_every_refusal(args, "--heatmap", "an SVG image");
  put(dir_ / "seed.stats", kStats);
  const auto r =
      run_glmrt({"stats", "--model", model_.string(), "--import", (dir_ / "seed.stats").string(),
                 "--heatmap", notes_.string(), "--force"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(bytes_of(notes_), HasSubstr("<svg"));
}

TEST_F(OutputFiles, StatsReplayPlot) {
  const fs::path trace = dir_ / "run.trace";
  put(trace, "glmrt-routing-trace 2\nmodel x\nshape 2 4 2\n0 1 0 1\n1 1 2 3\nend 2\n");
  const std::vector<std::string> args{"stats", "--replay", trace.string(), "--model",
                                      model_.string()};
  // Without --model: the trace's shape is its own (the model is then not read).
  expect_every_refusal(args, "--plot", "an SVG image");
  expect_refused({"stats", "--replay", trace.string()}, "--plot", notes_, "is not an SVG image");
  // The trace itself is no SVG either.
  expect_refused({"stats", "--replay", trace.string()}, "--plot", trace, "is not an SVG image");
  const auto r =
      run_glmrt({"stats", "--replay", trace.string(), "--plot", notes_.string(), "--force"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(bytes_of(notes_), HasSubstr("<svg"));
}

TEST_F(OutputFiles, CalibrateOut) {
  const auto args = calibrate_args();
  expect_every_refusal(args, "--out", "an importance file");
  expect_refused(args, "--out", model_ / "config.json", "inside the model directory");
  auto with_force = args;
  with_force.insert(with_force.end(), {"--out", notes_.string(), "--force"});
  const auto r = run_glmrt(with_force);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(bytes_of(notes_), HasSubstr("glmrt-importance-2"));
  // An earlier importance file is replaced without --force.
  auto again = args;
  again.insert(again.end(), {"--out", notes_.string()});
  EXPECT_EQ(run_glmrt(again).exit_status, 0);
}

TEST_F(OutputFiles, CalibrateOnAFullDiskFailsAndKeepsTheOldFile) {
  // The disk "fills" after 16 KB (a file size limit: write(2) fails with
  // EFBIG as with ENOSPC on a full disk): glm_tiny's statistics are larger.
  const fs::path out = dir_ / "importance.safetensors";
  const auto args = calibrate_args();
  auto first = args;
  first.insert(first.end(), {"--out", out.string()});
  ASSERT_EQ(run_glmrt(first).exit_status, 0);
  const std::string before = bytes_of(out);
  ASSERT_GT(before.size(), 16u << 10);
  std::string command = "(trap '' XFSZ; ulimit -f 16; exec " GLMRT_EXECUTABLE;
  for (const auto& a : first) command += " '" + a + "'";
  const std::string output = shell_output(command + ")");
  EXPECT_THAT(output, HasSubstr(out.filename().string()));
  EXPECT_THAT(output, HasSubstr(std::strerror(EFBIG)));
  EXPECT_THAT(output, HasSubstr("exit=1"));
  EXPECT_EQ(bytes_of(out), before);
  expect_all_kept();
}

TEST_F(OutputFiles, RunRecordRouting) {
  const std::vector<std::string> args{"run",
                                      "--profile",
                                      test::reference_profile(),
                                      "--model",
                                      model_.string(),
                                      "--prompt-ids",
                                      "1,2",
                                      "-n",
                                      "1"};
  expect_every_refusal(args, "--record-routing", "a routing trace");
  auto with_force = args;
  with_force.insert(with_force.end(), {"--record-routing", notes_.string(), "--force"});
  const auto r = run_glmrt(with_force);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(bytes_of(notes_), HasSubstr("glmrt-routing-trace"));
}

TEST_F(OutputFiles, ConvertTo) {
  const std::vector<std::string> args{"convert", "--from", model_.string(), "--experts", "int8"};
  expect_refused(args, "--to", fifo_, "a named pipe (FIFO)");
  expect_refused(args, "--to", notes_, "it is a regular file");
  auto with_force = args;
  with_force.push_back("--force");
  expect_refused(with_force, "--to", notes_, "not a folder");
  expect_refused(args, "--to", model_ / "out", "inside the source folder");
  expect_all_kept();
  EXPECT_FALSE(fs::exists(dir_ / "fifo.partial"));
  EXPECT_FALSE(fs::exists(dir_ / "notes.txt.partial"));
}

TEST_F(OutputFiles, ConvertThatFailsBeforeAFileIsFinishedLeavesNoPartial) {
  // As a convert refused for lack of space: the write of the first shard
  // fails (EFBIG past 16 KB); nothing but what was there remains.
  const fs::path out = dir_ / "container";
  std::string command = "(trap '' XFSZ; ulimit -f 16; exec " GLMRT_EXECUTABLE " convert --from '" +
                        model_.string() + "' --experts int8 --to '" + out.string() + "')";
  const std::string output = shell_output(command);
  EXPECT_THAT(output, HasSubstr(std::strerror(EFBIG)));
  EXPECT_THAT(output, HasSubstr("exit=1"));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "container.partial")));
  expect_all_kept();
}

TEST_F(OutputFiles, MakeModelOut) {
  const std::vector<std::string> args{"make-model", "--preset", "tiny", "--moe-layers", "1"};
  expect_refused(args, "--out", fifo_, "a named pipe (FIFO)");
  expect_refused(args, "--out", notes_, "a regular file");
  expect_refused(args, "--out", model_, "a directory holding files");
  expect_all_kept();
  EXPECT_FALSE(fs::exists(dir_ / "fifo.partial"));
}

}  // namespace
}  // namespace glmrt
