// OpenMP threads waiting for work spin before they sleep: libgomp's default
// (OMP_WAIT_POLICY unset) is 300 000 spins, milliseconds of a core, each time
// a thread runs out of work. With every core in use (threads: 0) and anything
// else running (glmrt's own io threads, other programs), the spinning threads
// take the cores the working ones need: a 4060-token prefill on two busy
// cores took over 120 s, and 2.1 s with OMP_WAIT_POLICY=passive.
//
// libgomp reads its environment once, in its library constructor, before
// main() runs, and has no call to change the wait policy afterwards: setting
// the variable in main() changes nothing. So the program executes itself
// again with the variable set. Header-only, for test programs that do not
// link the core.
#pragma once

#include <glmrt/base/printable.h>
#include <glmrt/base/warning.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace glmrt {

/// Call first thing in main(), before any other thread exists. When the
/// environment sets neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT (a user's
/// choice is kept), sets OMP_WAIT_POLICY=passive and executes this program
/// again: same process id, arguments and open files. Returns when there was
/// nothing to do, or when the new execution could not start (with a warning:
/// the threads then spin as before).
inline void restart_with_passive_omp_waiting(char** argv) {
  if (argv == nullptr || argv[0] == nullptr) return;
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (::setenv("OMP_WAIT_POLICY", "passive", 0) != 0) return;
  // The executable itself, wherever argv[0] points (a relative path, a name
  // found through PATH, a link).
  ::execv("/proc/self/exe", argv);
  const int error = errno;
  warn(
      "could not execute {} again with OMP_WAIT_POLICY=passive ({}): idle OpenMP threads "
      "spin for a while before they sleep; set OMP_WAIT_POLICY in the environment to choose",
      printable(argv[0], 256), std::strerror(error));
}

}  // namespace glmrt
