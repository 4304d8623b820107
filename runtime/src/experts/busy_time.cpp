#include <glmrt/base/elapsed_time.h>
#include <glmrt/experts/busy_time.h>

#include <algorithm>

namespace glmrt {

void BusyTime::submitted(Clock::time_point at) {
  in_flight_.insert(at);
}

void BusyTime::landed(Clock::time_point at, Clock::time_point until) {
  if (const auto it = in_flight_.find(at); it != in_flight_.end()) in_flight_.erase(it);
  until = std::max(until, at);
  // Merge [at, until) into the sorted, disjoint intervals; what it adds to
  // their union is what the drive's busy time grows by.
  auto first = std::lower_bound(
      merged_.begin(), merged_.end(), at,
      [](const auto& interval, Clock::time_point t) { return interval.second < t; });
  auto last = first;
  Clock::time_point begin = at, end = until;
  double covered = 0;
  while (last != merged_.end() && last->first <= until) {
    begin = std::min(begin, last->first);
    end = std::max(end, last->second);
    covered += seconds_between(last->first, last->second);
    ++last;
  }
  seconds_ += seconds_between(begin, end) - covered;
  last = merged_.erase(first, last);
  merged_.insert(last, {begin, end});
  forget_settled();
}

void BusyTime::forget_settled() {
  // A read in flight, or one submitted from now on, begins no earlier than this.
  const Clock::time_point horizon =
      in_flight_.empty() ? Clock::now() : std::min(*in_flight_.begin(), Clock::now());
  auto keep = std::find_if(merged_.begin(), merged_.end(),
                           [&](const auto& interval) { return interval.second >= horizon; });
  merged_.erase(merged_.begin(), keep);
}

}  // namespace glmrt
