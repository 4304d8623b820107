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

uint64_t ByteRateLimit::reserve_place(uint64_t bytes, bool urgent) {
  const auto now = Clock::now();
  const auto cost = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(double(bytes) / double(bytes_per_second_)));
  std::lock_guard lock(mutex_);
  const uint64_t id = next_id_++;
  // Reservations whose time has begun are at the drive; an urgent one goes
  // before the first that has not.
  auto at = places_.end();
  if (urgent)
    at =
        std::find_if(places_.begin(), places_.end(), [&](const Place& p) { return p.begin > now; });
  if (at == places_.end()) {
    const auto begin = std::max(next_, now - credit_);
    next_ = begin + cost;
    places_.push_back({id, begin, next_});
    return id;
  }
  const auto begin = at->begin;
  for (auto later = at; later != places_.end(); ++later) {
    later->begin += cost;
    later->end += cost;
  }
  next_ += cost;
  places_.insert(at, {id, begin, begin + cost});
  return id;
}

ByteRateLimit::Clock::time_point ByteRateLimit::due(uint64_t id) {
  std::lock_guard lock(mutex_);
  for (const Place& p : places_)
    if (p.id == id) return p.end;
  return Clock::now();
}

void ByteRateLimit::wait_for(uint64_t id) {
  for (;;) {
    const auto end = due(id);
    if (end > Clock::now()) {
      std::this_thread::sleep_until(end);
      continue;  // an urgent reservation may have moved it later meanwhile
    }
    std::lock_guard lock(mutex_);
    const auto it =
        std::find_if(places_.begin(), places_.end(), [&](const Place& p) { return p.id == id; });
    if (it == places_.end()) return;
    if (it->end > Clock::now()) continue;
    places_.erase(it);
    return;
  }
}

}  // namespace glmrt::io_support
