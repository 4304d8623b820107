#include <glmrt/experts/locked_memory.h>
#include <glmrt/base/byte_size.h>

#include <sys/mman.h>
#include <sys/resource.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace glmrt {

LockedMemory::~LockedMemory() {
  for (const Range& r : ranges_) ::munlock(r.data, r.bytes);
}

bool LockedMemory::lock(const void* data, size_t bytes) {
  if (refused()) return false;
  if (bytes == 0) return true;
  if (::mlock(data, bytes) == 0) {
    ranges_.push_back({data, bytes});
    locked_bytes_ += bytes;
    return true;
  }
  const int err = errno;
  rlimit limit{};
  ::getrlimit(RLIMIT_MEMLOCK, &limit);
  const std::string allowed = limit.rlim_cur == RLIM_INFINITY
                                  ? std::string("unlimited")
                                  : format_byte_size(static_cast<uint64_t>(limit.rlim_cur));
  refusal_ = fmt::format(
      "mlock refused after {} locked ({}; RLIMIT_MEMLOCK allows {}): the pinned experts stay in "
      "RAM unlocked and may be swapped out under memory pressure. Raise the limit (`ulimit -l`, "
      "LimitMEMLOCK= in a systemd unit, memlock in /etc/security/limits.conf) or set "
      "memory.mlock: false",
      format_byte_size(locked_bytes_), std::strerror(err), allowed);
  return false;
}

}  // namespace glmrt
