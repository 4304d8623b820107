// The most bytes per second one io plugin instance reads, all its files and
// reader threads together (`max_bytes_per_second`): a token bucket. Each
// read reserves its bytes on a shared clock that runs at the cap (with up to
// kBurst of credit saved while idle) and, once done, waits until the clock
// has passed them, so the read's own time counts toward the cap. With it N
// processes on one machine each behave like a machine with a drive of that
// speed (docs/distributed.md, *Scaling on one machine*).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace glmrt::io_support {

class ByteRateLimit {
 public:
  using Clock = std::chrono::steady_clock;
  /// Credit an idle limit keeps: a burst of this long at the cap.
  static constexpr std::chrono::milliseconds kBurst{20};

  explicit ByteRateLimit(uint64_t bytes_per_second) : bytes_per_second_(bytes_per_second) {}
  /// Reserves `bytes`; returns when the cap allows them to have been read.
  Clock::time_point reserve(uint64_t bytes);
  /// Sleeps until `due` (a time reserve() returned).
  static void wait_until(Clock::time_point due);

  uint64_t bytes_per_second() const { return bytes_per_second_; }

 private:
  uint64_t bytes_per_second_;
  std::mutex mutex_;
  Clock::time_point next_{};  // when the bytes reserved so far are allowed
};

}  // namespace glmrt::io_support
