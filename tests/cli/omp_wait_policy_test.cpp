// glmrt (and every test program) started without OMP_WAIT_POLICY ends up
// with OpenMP threads that sleep when idle; it used to spin them for
// milliseconds each time, which starved a busy machine. What the OpenMP
// runtime actually uses is read from libgomp itself: OMP_DISPLAY_ENV makes
// it print its settings when it loads, in every program image the process
// runs, so the last block is what the running glmrt got. Timing-free.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <string>
#include <string_view>
#include <vector>

#include "glmrt_process.h"

extern char** environ;

namespace glmrt::test {
namespace {

using ::testing::HasSubstr;

// This process's environment without the variables that choose a wait
// policy, plus `extra`.
std::vector<std::string> environment_without_wait_policy(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("OMP_WAIT_POLICY=") || entry.starts_with("GOMP_SPINCOUNT=") ||
        entry.starts_with("OMP_DISPLAY_ENV="))
      continue;
    out.emplace_back(entry);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

// The value libgomp printed last for `name` ("GOMP_SPINCOUNT = '0'" -> "0"),
// or empty.
std::string last_setting(const std::string& log, const std::string& name) {
  const std::string key = "  " + name + " = '";
  const size_t at = log.rfind(key);
  if (at == std::string::npos) return {};
  const size_t begin = at + key.size();
  return log.substr(begin, log.find('\'', begin) - begin);
}

ProcessResult run_showing_omp_settings(const std::string& program,
                                       const std::vector<std::string>& args,
                                       const std::vector<std::string>& extra_environment) {
  return run_with_environment(program, args, environment_without_wait_policy(extra_environment));
}

TEST(OmpWaitPolicy, GlmrtStartedWithoutOneWaitsPassively) {
  const ProcessResult r =
      run_showing_omp_settings(GLMRT_EXECUTABLE, {"--help"}, {"OMP_DISPLAY_ENV=verbose"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  if (last_setting(r.err, "GOMP_SPINCOUNT").empty()) GTEST_SKIP() << "not libgomp:\n" << r.err;
  EXPECT_EQ(last_setting(r.err, "GOMP_SPINCOUNT"), "0") << r.err;
  EXPECT_EQ(last_setting(r.err, "OMP_WAIT_POLICY"), "PASSIVE") << r.err;
  EXPECT_THAT(r.err, HasSubstr("usage: glmrt"));  // and it still did its work
}

TEST(OmpWaitPolicy, AUsersChoiceIsKept) {
  const ProcessResult active = run_showing_omp_settings(
      GLMRT_EXECUTABLE, {"--help"}, {"OMP_DISPLAY_ENV=verbose", "OMP_WAIT_POLICY=active"});
  if (last_setting(active.err, "GOMP_SPINCOUNT").empty()) GTEST_SKIP() << "not libgomp";
  EXPECT_EQ(last_setting(active.err, "OMP_WAIT_POLICY"), "ACTIVE") << active.err;
  EXPECT_NE(last_setting(active.err, "GOMP_SPINCOUNT"), "0") << active.err;
  const ProcessResult spin = run_showing_omp_settings(
      GLMRT_EXECUTABLE, {"--help"}, {"OMP_DISPLAY_ENV=verbose", "GOMP_SPINCOUNT=1234"});
  EXPECT_EQ(last_setting(spin.err, "GOMP_SPINCOUNT"), "1234") << spin.err;
}

// The test programs' main() does the same (tests/support/test_main.cpp);
// this one, which runs the OpenMP runtime too, shows it.
TEST(OmpWaitPolicy, TestProgramsStartedWithoutOneWaitPassively) {
  ASSERT_GT(omp_get_num_procs(), 0);
  const ProcessResult r = run_showing_omp_settings("/proc/self/exe", {"--gtest_list_tests"},
                                                   {"OMP_DISPLAY_ENV=verbose"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  if (last_setting(r.err, "GOMP_SPINCOUNT").empty()) GTEST_SKIP() << "not libgomp";
  EXPECT_EQ(last_setting(r.err, "GOMP_SPINCOUNT"), "0") << r.err;
}

}  // namespace
}  // namespace glmrt::test
