// The drive's idle time between steps: from the last read of a step's last
// MoE layer to the first read submitted for the next step. Reading the next
// step's first experts ahead (before the step begins) closes that gap; when
// nothing does, the drive waits through the lm_head, sampling and the dense
// layers before the next step's first MoE layer asks for anything.
#pragma once

#include <chrono>
#include <cstdint>

namespace glmrt {

class DriveIdleGaps {
 public:
  using Clock = std::chrono::steady_clock;

  /// A read's landing became known (the host learns of landings late, at
  /// poll or wait, with the time the read landed).
  void landed(Clock::time_point at) {
    if (at > latest_landing_) latest_landing_ = at;
  }
  /// The step's last MoE layer has all its reads: the gap opens at the
  /// latest landing, unless reads for the next step were already submitted
  /// (then the drive did not idle: a gap of 0).
  void step_reads_done(bool next_step_reads_submitted) {
    if (next_step_reads_submitted) {
      ++gaps_;
      open_ = false;
      return;
    }
    open_ = true;
  }
  /// A read is submitted; `drive_idle`: no earlier read is still in flight.
  void submitted(Clock::time_point at, bool drive_idle) {
    if (!open_) return;
    open_ = false;
    ++gaps_;
    if (drive_idle && at > latest_landing_ && latest_landing_ != Clock::time_point{})
      idle_seconds_ += std::chrono::duration<double>(at - latest_landing_).count();
  }

  /// Gaps closed so far, and the idle seconds they held.
  uint64_t gaps() const { return gaps_; }
  double idle_seconds() const { return idle_seconds_; }

 private:
  Clock::time_point latest_landing_{};
  bool open_ = false;
  uint64_t gaps_ = 0;
  double idle_seconds_ = 0;
};

}  // namespace glmrt
