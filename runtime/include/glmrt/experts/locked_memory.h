// Memory ranges locked in RAM (mlock) while this object lives, so the pinned
// experts are never swapped out. A refusal (RLIMIT_MEMLOCK, no privilege) is
// not an error: the ranges stay unlocked and locked() says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace glmrt {

class LockedMemory {
 public:
  LockedMemory() = default;
  LockedMemory(const LockedMemory&) = delete;
  LockedMemory& operator=(const LockedMemory&) = delete;
  ~LockedMemory();

  /// Locks [data, data + bytes); false (and nothing more is tried) once the
  /// system refuses. refusal() then says why and how to allow it.
  bool lock(const void* data, size_t bytes);
  uint64_t locked_bytes() const { return locked_bytes_; }
  bool refused() const { return !refusal_.empty(); }
  const std::string& refusal() const { return refusal_; }

 private:
  struct Range {
    const void* data;
    size_t bytes;
  };
  std::vector<Range> ranges_;
  uint64_t locked_bytes_ = 0;
  std::string refusal_;
};

}  // namespace glmrt
