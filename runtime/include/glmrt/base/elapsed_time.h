// Elapsed wall time in seconds, as every report and cost model counts it: on
// the steady clock, which a change of the system time does not move.
#pragma once

#include <chrono>

namespace glmrt {

using SteadyTime = std::chrono::steady_clock::time_point;

/// Seconds from `start` to `end`.
inline double seconds_between(SteadyTime start, SteadyTime end) {
  return std::chrono::duration<double>(end - start).count();
}

/// Seconds from `start` to now.
inline double seconds_since(SteadyTime start) {
  return seconds_between(start, std::chrono::steady_clock::now());
}

}  // namespace glmrt
