// `serve --http-threads` has a ceiling from the machine, refused above it
// naming it, before the model loads: 100000 used to be accepted, exhausted
// the process table and, in a pids cgroup, never listened (issue 34).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "glmrt_process.h"

namespace glmrt {
namespace {

using test::reference_profile;
using test::run_glmrt;
using test::run_with_environment;
using test::tiny_model;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ServeThreads, FarTooManyAreRefusedNamingTheCeiling) {
  const auto r = run_glmrt({"serve", "--profile", reference_profile(), "--model", tiny_model(),
                            "--port", "0", "--http-threads", "100000"});
  EXPECT_EQ(r.exit_status, 1) << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("--http-threads 100000"), HasSubstr("ceiling of 4096")));
}

TEST(ServeThreads, ADefaultFromAHugeQueueIsRefusedToo) {
  const auto r = run_glmrt({"serve", "--profile", reference_profile(), "--model", tiny_model(),
                            "--port", "0", "--max-queue", "50000", "--parallel", "2"});
  EXPECT_EQ(r.exit_status, 1) << r.err;
  // One thread per queued and per running request, and 3 for /health and refusals.
  EXPECT_THAT(r.err, AllOf(HasSubstr("--max-queue 50000"), HasSubstr("50005 HTTP threads")));
}

TEST(ServeThreads, NegativeIsRefused) {
  const auto r = run_glmrt({"serve", "--profile", reference_profile(), "--model", tiny_model(),
                            "--port", "0", "--http-threads", "-3"});
  EXPECT_EQ(r.exit_status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--http-threads must be >= 0"));
}

// Half of what `ulimit -u` allows (the process limit, which the model's
// threads and other processes share).
TEST(ServeThreads, TheProcessLimitLowersTheCeiling) {
  const auto r = run_with_environment(
      "/usr/bin/prlimit",
      {"--nproc=3000", GLMRT_EXECUTABLE, "serve", "--profile", reference_profile(), "--model",
       tiny_model(), "--port", "0", "--http-threads", "2000"},
      {"PATH=/usr/bin:/bin"});
  if (r.exit_status == 127) GTEST_SKIP() << "no prlimit: " << r.err;
  EXPECT_EQ(r.exit_status, 1) << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("--http-threads 2000"), HasSubstr("ceiling of 1500"),
                           HasSubstr("RLIMIT_NPROC")));
}

}  // namespace
}  // namespace glmrt
