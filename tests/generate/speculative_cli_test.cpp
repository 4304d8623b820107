// `glmrt run` and `glmrt chat` honour plugins.draft: the answer is the one
// decoding without a drafter gives (greedy), the report's `decode:` line
// keeps its form, and speculative decoding's own lines follow it.
#include "engine_fixture.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

struct Output {
  int status = -1;
  std::string out, err;
};

Output run_glmrt(const std::string& arguments, const std::string& input = "") {
  const fs::path err_file =
      fs::temp_directory_path() / ("glmrt-spec-cli-" + std::to_string(::getpid()));
  const fs::path in_file = err_file.string() + ".in";
  std::ofstream(in_file) << input;
  const std::string command = std::string(GLMRT_BUILD_DIR) + "/glmrt " + arguments + " <" +
                              in_file.string() + " 2>" + err_file.string();
  Output o;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return o;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    o.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream err;
  err << std::ifstream(err_file).rdbuf();
  o.err = err.str();
  fs::remove(err_file);
  fs::remove(in_file);
  return o;
}

std::string profile(const std::string& name) {
  return std::string(GLMRT_SOURCE_DIR) + "/configs/" + name;
}

/// The report's first line keeps its form: "prefill: ... ; decode: N tokens
/// in S s (R tokens/s)".
void expect_decode_line(const std::string& err) {
  const size_t prefill = err.find("prefill: ");
  const size_t decode = err.find("; decode: ", prefill);
  ASSERT_NE(prefill, std::string::npos) << err;
  ASSERT_NE(decode, std::string::npos) << err;
  EXPECT_EQ(err.find('\n', prefill), err.find(")\n", decode) + 1) << "one line";
  int tokens = 0;
  double seconds = 0, rate = 0;
  char close = 0;
  const int read = std::sscanf(err.c_str() + decode, "; decode: %d tokens in %lf s (%lf tokens/s%c",
                               &tokens, &seconds, &rate, &close);
  EXPECT_EQ(read, 4) << err.substr(decode, 80);
  EXPECT_EQ(close, ')');
}

void expect_draft_report(const std::string& err, const std::string& drafter) {
  expect_decode_line(err);
  for (const std::string& line :
       {"\ndraft: " + drafter + ": ", std::string("\ndraft acceptance by position: 1: "),
        std::string("\ndraft cost model: fixed length; steps by drafts chosen {")})
    EXPECT_NE(err.find(line), std::string::npos) << line << " missing from:\n" << err;
}

TEST(SpeculativeCli, RunDraftsAndPrintsTheSameAnswer) {
  const std::string common = "--model " + test_support::kTinyModel.string() +
                             " --prompt-ids 5,6,7,5,6,7,5,6 -n 12 --ignore-eos";
  const Output plain = run_glmrt("run --profile " + profile("reference.yaml") + " " + common);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.err.find("\ndraft"), std::string::npos);
  for (const std::string drafter : {"ngram", "mtp"}) {
    const Output drafted =
        run_glmrt("run --profile " + profile("reference-" + drafter + ".yaml") + " " + common);
    ASSERT_EQ(drafted.status, 0) << drafted.err;
    EXPECT_EQ(drafted.out, plain.out) << drafter;
    expect_draft_report(drafted.err, "draft-" + drafter);
  }
}

TEST(SpeculativeCli, ChatReportsDraftingEveryTurn) {
  const Output o = run_glmrt("chat --profile " + profile("reference-mtp.yaml") + " --model " +
                                 test_support::kTinyModel.string() + " -n 6 --stats",
                             "hello\nand again\n/stats\n");
  ASSERT_EQ(o.status, 0) << o.err;
  expect_draft_report(o.err, "draft-mtp");
  size_t turns = 0;
  for (size_t at = o.err.find("\ndraft: draft-mtp: "); at != std::string::npos;
       at = o.err.find("\ndraft: draft-mtp: ", at + 1))
    ++turns;
  EXPECT_EQ(turns, 3u);  // two answers (--stats: the full report each) and /stats
}

}  // namespace
}  // namespace glmrt
