// Flags that were accepted and then ignored or misread: a negative --seed
// (wrapped to 2^64-1), flags of one mode given to another (validate --ref R
// --against P ran one and dropped the other), and range messages that
// printed integers as "1.04858e+06". Every refusal comes before the model
// loads and names the flags.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "glmrt_process.h"

namespace glmrt::test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ref_json() {
  return tiny_model() + "/ref.json";
}

/// Expects `args` to fail with status 1, nothing on stdout, and every one of
/// `needles` on stderr.
void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
  const ProcessResult r = run_glmrt(args);
  std::string command;
  for (const std::string& arg : args) command += arg + " ";
  EXPECT_EQ(r.exit_status, 1) << command << "\n" << r.err;
  EXPECT_EQ(r.out, "") << command;
  for (const std::string& needle : needles) EXPECT_THAT(r.err, HasSubstr(needle)) << command;
}

TEST(StrictFlags, ANegativeSeedIsRefused) {
  const std::vector<std::string> run = {"run",     "--profile",  reference_profile(),
                                        "--model", tiny_model(), "--prompt-ids",
                                        "1,2",     "-n",         "1"};
  for (const char* seed : {"-1", "1.5", "+3", "18446744073709551616"}) {
    std::vector<std::string> args = run;
    args.insert(args.end(), {"--seed", seed});
    expect_refused(args, {"--seed: `" + std::string(seed) + "`", "from 0 to 18446744073709551615"});
  }
  std::vector<std::string> args = run;
  args.insert(args.end(), {"--seed", "-1"});
  expect_refused(args, {"is negative"});
  // make-model's seed is read the same way (refused before anything is written).
  const std::string out =
      (std::filesystem::temp_directory_path() / "glmrt-strict-flags-never-written").string();
  expect_refused(
      {"make-model", "--preset", "tiny", "--moe-layers", "1", "--out", out, "--seed", "-1"},
      {"--seed: `-1` is negative"});
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(StrictFlags, NegativeBodyLimitsOfServeAreRefused) {
  // "-1" read into an unsigned flag became 2^64-1: no body limit at all.
  for (const char* flag : {"--max-body-bytes", "--max-body-memory"})
    expect_refused({"serve", "--profile", reference_profile(), "--model", tiny_model(), "--port",
                    "0", flag, "-1"},
                   {std::string(flag) + ": `-1` is negative"});
}

TEST(StrictFlags, IntegerRangesArePrintedAsIntegers) {
  const ProcessResult r = run_glmrt({"run", "--profile", reference_profile(), "--model",
                                     tiny_model(), "--prompt-ids", "1,2", "-n", "1000000000"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--max-new-tokens: 1000000000 is out of range: expected an "
                                     "integer from 0 to 1048576"),
                           Not(HasSubstr("e+"))));
}

TEST(StrictFlags, ValidateRefusesFlagsOfTheOtherMode) {
  const std::vector<std::string> base = {"validate", "--profile", reference_profile(), "--model",
                                         tiny_model()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_refused(with({"--ref", ref_json(), "--against", reference_profile()}),
                 {"validate: --ref and --against cannot be given together"});
  expect_refused(
      with({"--against", reference_profile(), "--text", ref_json(), "--ids", ref_json()}),
      {"--text and --ids cannot be given together"});
  expect_refused(with({"--ref", ref_json(), "--window", "64"}),
                 {"--window applies only with --against"});
  expect_refused(with({"--ref", ref_json(), "--ids", ref_json()}),
                 {"--ids applies only with --against"});
  expect_refused(
      with({"--against", reference_profile(), "--ids", ref_json(), "--prefill-chunk", "7"}),
      {"--against and --prefill-chunk cannot be given together"});
  expect_refused(
      with({"--against", reference_profile(), "--ids", ref_json(), "--attention-form", "absorbed"}),
      {"--against and --attention-form"});
  expect_refused(with({"--against", reference_profile(), "--ids", ref_json(), "--max-dlogit", "1"}),
                 {"--against and --max-dlogit"});
}

TEST(StrictFlags, ScoreRunAndBenchRefuseFlagsThatWouldBeIgnored) {
  expect_refused({"score", "--profile", reference_profile(), "--model", tiny_model(), "--requests",
                  ref_json(), "--window", "16"},
                 {"score: --window applies only with --perplexity"});
  expect_refused({"score", "--profile", reference_profile(), "--model", tiny_model(), "--requests",
                  ref_json(), "--stride", "4"},
                 {"--stride applies only with --perplexity"});
  for (const char* flag : {"--no-thinking", "--clear-thinking"})
    expect_refused(
        {"run", "--profile", reference_profile(), "--model", tiny_model(), "--prompt", "hi", flag},
        {std::string("run: ") + flag + " applies only with --chat"});
  expect_refused({"run", "--profile", reference_profile(), "--model", tiny_model(), "--prompt",
                  "hi", "--system", "be brief"},
                 {"--system applies only with --chat"});
  expect_refused({"bench", "--model", tiny_model(), "--profile", reference_profile(),
                  "--limits-memory", "256MiB"},
                 {"bench: --limits-memory applies only with --limits"});
}

}  // namespace
}  // namespace glmrt::test
