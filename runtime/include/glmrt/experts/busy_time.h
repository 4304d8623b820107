// The wall time during which at least one read was in flight: the length of
// the union of the reads' [submitted, landed) intervals. Reads are added
// when the host learns how they ended, which is out of order and after the
// fact (a plugin says when a read landed; the host asks only at poll or
// wait), so the union is kept exactly over the intervals that a read still
// in flight, or one submitted later, could still overlap.
#pragma once

#include <chrono>
#include <set>
#include <utility>
#include <vector>

namespace glmrt {

class BusyTime {
 public:
  using Clock = std::chrono::steady_clock;

  /// A read was submitted at `at`; every submit is later followed by one
  /// landed() with the same `at`.
  void submitted(Clock::time_point at);
  /// The read submitted at `at` was in flight until `until` (>= at).
  void landed(Clock::time_point at, Clock::time_point until);

  /// No read is in flight, as far as the host knows.
  bool idle() const { return in_flight_.empty(); }
  /// Seconds with at least one read in flight, of reads that have landed.
  double seconds() const { return seconds_; }

 private:
  /// Drops the intervals that end before every read still in flight began:
  /// no later interval can reach them.
  void forget_settled();

  std::multiset<Clock::time_point> in_flight_;
  std::vector<std::pair<Clock::time_point, Clock::time_point>> merged_;  // sorted, disjoint
  double seconds_ = 0;
};

}  // namespace glmrt
