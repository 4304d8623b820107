// Command-line values checked before anything loads, each error naming the
// flag: sampling flags hold the same ranges as the profile (NaN was
// accepted), --prompt-ids takes plain ids only (empty elements and "+1"
// were accepted).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  for (const char* flag :
       {"--temperature", "--top-p", "--min-p", "--repetition-penalty", "--presence-penalty"}) {
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

}  // namespace
}  // namespace glmrt::test
