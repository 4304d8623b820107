#include "byte_rate_limit.h"

#include <algorithm>
#include <thread>

namespace glmrt::io_support {

ByteRateLimit::Clock::time_point ByteRateLimit::reserve(uint64_t bytes) {
  const auto now = Clock::now();
  const auto cost = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(double(bytes) / double(bytes_per_second_)));
  std::lock_guard lock(mutex_);
  next_ = std::max(next_, now - credit_) + cost;
  return next_;
}

void ByteRateLimit::wait_until(Clock::time_point due) {
  std::this_thread::sleep_until(due);
}

}  // namespace glmrt::io_support
