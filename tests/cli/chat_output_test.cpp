// What `glmrt chat` prints after an answer: by default the answer and one
// short line of figures; the full report under --stats, and the last
// answer's under /stats. Figures that do not apply are left out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "glmrt_process.h"

namespace glmrt::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

ProcessResult chat(const std::string& profile, const std::string& input,
                   std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"chat",       "--profile", profile, "--model",
                                   tiny_model(), "-n",        "6",     "--no-thinking"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_glmrt(args, Stdout::captured, input);
}

TEST(ChatOutput, EachAnswerGetsOneShortLineOfFiguresByDefault) {
  const ProcessResult r = chat(reference_profile(), "hello\nand again\n");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // The answers are on stdout; stderr holds per answer one figures line (and
  // the note that the token limit cut it), nothing of the full report.
  // gmock's regex is POSIX <regex.h>: GCC 12's std::regex fails -Werror in
  // the sanitizer build.
  const auto figures = ::testing::MatchesRegex(
      "\\([0-9]+ tokens?(, [0-9.]+ tokens/s)?(, expert hit rate [0-9.]+%)?\\)");
  size_t figure_lines = 0;
  for (const std::string& line : lines_of(r.err)) {
    if (line.starts_with("[answer stopped: ")) continue;
    EXPECT_THAT(line, figures);
    ++figure_lines;
  }
  EXPECT_EQ(figure_lines, 2u) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("prefill:")));
  EXPECT_THAT(r.err, Not(HasSubstr("peak RSS")));
  EXPECT_EQ(lines_of(r.out).size(), 2u) << r.out;
}

TEST(ChatOutput, SlashStatsPrintsTheLastAnswersFullReport) {
  const ProcessResult r = chat(reference_profile(), "/stats\nhello\n/stats\n");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no answer yet"));
  EXPECT_EQ(count_of(r.err, "conversation: "), 2u) << r.err;
  EXPECT_EQ(count_of(r.err, "\nprefill: "), 1u) << r.err;
  for (const char* line : {"\nexpert cache: ", "\nexpert reads: ", "\nprefetch: ",
                           "\nexpert lookups: ", "\npeak RSS: ", "\nthreads: "})
    EXPECT_EQ(count_of(r.err, line), 1u) << line << " in\n" << r.err;
  // One answer's figures: its prompt was prefilled, nothing reused.
  EXPECT_THAT(r.err, HasSubstr("(0 reused from the cache)"));
}

TEST(ChatOutput, TheStatsFlagPrintsTheFullReportAfterEveryAnswer) {
  const ProcessResult r = chat(reference_profile(), "hello\nand again\n", {"--stats"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(count_of(r.err, "prefill: "), 2u) << r.err;
  EXPECT_EQ(count_of(r.err, "\nexpert lookups: "), 2u) << r.err;
}

// Without read-ahead the next layer's experts are still predicted (cheap),
// so the accuracy is reported beside "off".
TEST(ChatOutput, PredictionIsMeasuredWithReadAheadOff) {
  const fs::path profile = fs::temp_directory_path() /
                           ("glmrt-chat-no-prefetch-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered, draft: none}\n"
                            "memory: {expert_cache: 16, prefetch: 0, max_context: 256}\n"
                            "generation: {temperature: 0.0, seed: 1}\n";
  const ProcessResult r = chat(profile.string(), "hello\n/stats\n");
  fs::remove(profile);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("\nprefetch: off (0 slots per layer); predicted "));
  EXPECT_THAT(r.err, HasSubstr("accuracy"));
  EXPECT_THAT(r.err, HasSubstr("0 reads ahead (0.0 MiB)"));
}

}  // namespace
}  // namespace glmrt::test
