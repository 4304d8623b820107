// The main() of the test programs: GoogleTest's, after the same OpenMP wait
// policy glmrt itself starts with (base/omp_wait_policy.h), so a test run by
// hand on a busy machine does not spin its idle threads either.
#include <glmrt/base/omp_wait_policy.h>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  glmrt::restart_with_passive_omp_waiting(argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
