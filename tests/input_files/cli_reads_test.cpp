// The commands' own input files (requests, token ids, texts, profiles, chat
// requests) read through the bounded reader: /dev/zero, a FIFO or a sparse
// giant is refused at once, naming the file, by the command a user runs.
#include "glmrt_process.h"
#include "temp_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace glmrt {
namespace {

using test::run_glmrt;
using test::TempFolder;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(CommandInputs, ScoreRefusesDevZeroRequestsAndNulsOnStdin) {
  const auto r = run_glmrt({"score", "--profile", test::reference_profile(), "--model",
                            test::tiny_model(), "--requests", "/dev/zero"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("/dev/zero: cannot read the requests file"),
                           HasSubstr("a character device")));
  const auto piped = run_glmrt({"score", "--profile", test::reference_profile(), "--model",
                                test::tiny_model(), "--requests", "-"},
                               test::Stdout::captured, std::string("1 1 5 6\n\0\0", 10));
  EXPECT_EQ(piped.exit_status, 1);
  EXPECT_THAT(piped.err, AllOf(HasSubstr("stdin"), HasSubstr("NUL byte")));
}

TEST(CommandInputs, TokenizeDecodeRefusesBytesHiddenAfterANul) {
  const std::string tokenizer = test::tiny_model() + "/tokenizer.json";
  const auto r = run_glmrt({"tokenize", "--tokenizer", tokenizer, "--decode"},
                           test::Stdout::captured, std::string("[1,2]\0garbage", 13));
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("stdin"), HasSubstr("NUL byte")));
  // Text to tokenize may hold a NUL.
  EXPECT_EQ(run_glmrt({"tokenize", "--tokenizer", tokenizer}, test::Stdout::captured,
                      std::string("a\0b", 3))
                .exit_status,
            0);
}

TEST(CommandInputs, FifosAreRefusedWithoutWaiting) {
  TempFolder dir;
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto profile = run_glmrt({"run", "--profile", fifo.string(), "--prompt", "x"});
  EXPECT_EQ(profile.exit_status, 1);
  EXPECT_THAT(profile.err, AllOf(HasSubstr(fifo.string()), HasSubstr("the profile"),
                                 HasSubstr("a named pipe (FIFO)")));
  const auto request =
      run_glmrt({"template", "--model", test::tiny_model(), "--request", fifo.string()});
  EXPECT_EQ(request.exit_status, 1);
  EXPECT_THAT(request.err, AllOf(HasSubstr("the request file"), HasSubstr("a named pipe")));
  const auto text = run_glmrt({"score", "--profile", test::reference_profile(), "--model",
                               test::tiny_model(), "--perplexity", fifo.string()});
  EXPECT_EQ(text.exit_status, 1);
  EXPECT_THAT(text.err, HasSubstr("a named pipe"));
}

TEST(CommandInputs, ValidateRefusesAGiantIdsFile) {
  TempFolder dir;
  const auto ids = dir / "ids";
  std::ofstream(ids).close();
  ASSERT_EQ(::truncate(ids.c_str(), off_t{1} << 30), 0);  // holes only
  const auto r =
      run_glmrt({"validate", "--profile", test::reference_profile(), "--against",
                 test::reference_profile(), "--model", test::tiny_model(), "--ids", ids.string()});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr(ids.string()), HasSubstr("holds 1073741824 bytes")));
}

}  // namespace
}  // namespace glmrt
