// Command-line values checked before anything loads, each error naming the
// flag: sampling flags hold the same ranges as the profile (NaN was
// accepted) and reach the sampler, --prompt-ids takes plain ids only (empty
// elements and "+1" were accepted).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "glmrt_process.h"

namespace glmrt::test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

ProcessResult run_with(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", "--profile", reference_profile(), "--model", tiny_model(),
                                   "-n",  "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_glmrt(args);
}

TEST(Flags, NaNSamplingValuesAreRefusedNamingTheFlag) {
  for (const char* flag : {"--temperature", "--top-p", "--min-p", "--repetition-penalty",
                           "--presence-penalty", "--frequency-penalty"}) {
    const ProcessResult r = run_with({"--prompt-ids", "1,2", flag, "nan"});
    EXPECT_EQ(r.exit_status, 1) << flag;
    EXPECT_THAT(r.err, AllOf(HasSubstr(std::string("glmrt: error: ") + flag + ": nan"),
                             HasSubstr("out of range")))
        << flag;
    EXPECT_EQ(r.out, "") << flag;
  }
}

TEST(Flags, OutOfRangeSamplingValuesGiveTheRange) {
  const ProcessResult r = run_with({"--prompt-ids", "1,2", "--top-p", "0"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, HasSubstr("--top-p: 0 is out of range: expected a number in (0, 1]"));
}

/// The ids `glmrt run --prompt-ids` printed: "5,7,7\n" -> {5, 7, 7}.
std::vector<long> printed_ids(const std::string& out) {
  std::vector<long> ids;
  std::string digits;
  for (char c : out) {
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (!digits.empty()) {
      ids.push_back(std::stol(digits));
      digits.clear();
    }
  }
  if (!digits.empty()) ids.push_back(std::stol(digits));
  return ids;
}

// Greedy, so only the penalty can change which token wins: at -100 the first
// token is repeated for ever, at +100 no token can win twice.
TEST(Flags, TheFrequencyPenaltyFlagReachesTheSampler) {
  auto answer = [](const char* penalty) {
    const ProcessResult r =
        run_glmrt({"run", "--profile", reference_profile(), "--model", tiny_model(), "-n", "6",
                   "--prompt-ids", "1,2", "--temperature", "0", "--ignore-eos",
                   "--frequency-penalty", penalty});
    EXPECT_EQ(r.exit_status, 0) << r.err;
    return printed_ids(r.out);
  };
  const std::vector<long> repeats = answer("-100");
  ASSERT_EQ(repeats.size(), 6u);
  EXPECT_EQ(std::count(repeats.begin(), repeats.end(), repeats[0]), 6);
  std::vector<long> distinct = answer("100");
  ASSERT_EQ(distinct.size(), 6u);
  std::sort(distinct.begin(), distinct.end());
  EXPECT_EQ(std::adjacent_find(distinct.begin(), distinct.end()), distinct.end());
}

TEST(Flags, PromptIdsTakePlainIdsOnly) {
  const struct {
    const char* ids;
    const char* needle;
  } cases[] = {
      {"1,,2", "element 2 is empty"}, {"1,2,", "element 3 is empty"},
      {"+1,2", "element 1 (`+1`)"},   {"1,-2", "element 2 (`-2`)"},
      {"1,2x", "element 2 (`2x`)"},   {"1,99999999999", "element 2 (`99999999999`)"},
      {" ", "no token ids given"},
  };
  for (const auto& c : cases) {
    const ProcessResult r = run_with({"--prompt-ids", c.ids});
    EXPECT_EQ(r.exit_status, 1) << c.ids;
    EXPECT_THAT(r.err, AllOf(HasSubstr("--prompt-ids: "), HasSubstr(c.needle))) << c.ids;
  }
  const ProcessResult ok = run_with({"--prompt-ids", " 1, 2 ,3"});
  EXPECT_EQ(ok.exit_status, 0) << ok.err;
  EXPECT_EQ(std::count(ok.out.begin(), ok.out.end(), ','), 1) << ok.out;  // two ids
}

TEST(Flags, ATokenizerFolderIsReportedAsOne) {
  const ProcessResult r =
      run_glmrt({"tokenize", "--tokenizer", tiny_model()}, Stdout::captured, "hi");
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("is a directory"), HasSubstr("tokenizer.json?")));
}

// A GGUF file's tokenizer (its tokenizer.ggml.* keys) gives the ids its
// tokenizer.json gives; a GGUF that names an unknown pre-tokenizer is refused
// naming the key and the name.
TEST(Flags, TokenizeReadsAGgufFilesTokenizer) {
  const std::string fixtures = GLMRT_FIXTURES;
  const std::string text = "Hello world, 12345 <|user|>hi";
  const ProcessResult gguf = run_glmrt(
      {"tokenize", "--tokenizer", fixtures + "/gguf/glm_tiny-vocab.gguf"}, Stdout::captured, text);
  const ProcessResult json =
      run_glmrt({"tokenize", "--tokenizer", fixtures + "/tokenizer/glm_tiny/tokenizer.json"},
                Stdout::captured, text);
  EXPECT_EQ(gguf.exit_status, 0) << gguf.err;
  EXPECT_EQ(gguf.out, json.out);
  EXPECT_THAT(gguf.out, HasSubstr("1017"));  // <|user|> whole
}

TEST(Flags, VersionPrintsTheProjectVersionAndNeedsNoModel) {
  const ProcessResult version = run_glmrt({"--version"});
  EXPECT_EQ(version.exit_status, 0) << version.err;
  // "glmrt 0.1.0" then, built from a git checkout, " (git <describe>)".
  EXPECT_THAT(version.out, ::testing::StartsWith("glmrt " GLMRT_PROJECT_VERSION));
  ASSERT_FALSE(version.out.empty());
  EXPECT_EQ(version.out.back(), '\n');
  EXPECT_EQ(version.err, "");
}

}  // namespace
}  // namespace glmrt::test
