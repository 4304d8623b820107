// The most bytes per second one io plugin instance reads, all its files and
// reader threads together (`max_bytes_per_second`): a token bucket. Each
// read reserves its bytes on a shared clock that runs at the cap (with up to
// `cap_credit_seconds` of credit saved while idle, kBurst by default) and,
// once done, waits until the clock has passed them, so the read's own time
// counts toward the cap. With no credit a read after an idle spell takes its
// bytes / the cap, as on a drive of that speed; the default credit keeps the
// average rate when reader threads wake late on a loaded machine. With it N
// processes on one machine each behave like a machine with a drive of that
// speed (docs/distributed.md, *Scaling on one machine*).
//
// The clock is the emulated drive's queue, so a read that a reader thread
// has reserved is at the drive. For urgent reads (io ABI 1.6) the queue is
// reordered as a drive's would be: an urgent reservation takes the place of
// the first one whose time has not begun, and those after it move later by
// its time (their readers, waiting, learn the new time).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>

namespace glmrt::io_support {

class ByteRateLimit {
 public:
  using Clock = std::chrono::steady_clock;
  /// Credit an idle limit keeps: a burst of this long at the cap.
  static constexpr std::chrono::milliseconds kBurst{20};

  explicit ByteRateLimit(uint64_t bytes_per_second, Clock::duration credit = kBurst)
      : bytes_per_second_(bytes_per_second), credit_(credit) {}
  /// Reserves `bytes`; returns when the cap allows them to have been read.
  Clock::time_point reserve(uint64_t bytes);
  /// Sleeps until `due` (a time reserve() returned).
  static void wait_until(Clock::time_point due);

  /// reserve() for a read whose place may change: an `urgent` one goes
  /// before every reservation that has not begun. Returns its id for
  /// due() and wait_for().
  uint64_t reserve_place(uint64_t bytes, bool urgent);
  /// When the reservation `id` is allowed to have been read (now: unknown id).
  Clock::time_point due(uint64_t id);
  /// Sleeps until the reservation's time, which may move later meanwhile,
  /// and forgets it.
  void wait_for(uint64_t id);

  uint64_t bytes_per_second() const { return bytes_per_second_; }

 private:
  uint64_t bytes_per_second_;
  Clock::duration credit_;
  std::mutex mutex_;
  Clock::time_point next_{};  // when the bytes reserved so far are allowed
  struct Place {
    uint64_t id;
    Clock::time_point begin, end;
  };
  std::deque<Place> places_;  // reserve_place()'s not yet waited for, by begin
  uint64_t next_id_ = 1;
};

}  // namespace glmrt::io_support
