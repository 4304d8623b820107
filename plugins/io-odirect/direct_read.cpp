#include "direct_read.h"

#include <errno.h>

#include <algorithm>
#include <cstring>

namespace glmrt::io_odirect {
namespace {

// pread may return less than asked for above ~2 GiB on Linux; ask for less
// (a multiple of every alignment, so O_DIRECT pieces stay aligned).
constexpr uint64_t kMaxSingleRead = 1ull << 30;

bool aligned(uint64_t value, uint32_t alignment) {
  return value % alignment == 0;
}

std::string where(const FileTwins& file, uint64_t offset, uint64_t length) {
  return file.path + " at offset " + std::to_string(offset) + " (" + std::to_string(length) +
         " bytes)";
}

}  // namespace

ExtentRead read_extent_fully(const FileTwins& file, uint64_t offset, uint64_t length,
                             std::byte* destination, uint32_t alignment, bool use_direct,
                             PreadFn pread_fn) {
  ExtentRead out;
  uint64_t& done = out.bytes;
  int stalls = 0;
  while (done < length) {
    const uint64_t at = offset + done;
    std::byte* into = destination + done;
    const uint64_t want = std::min(length - done, kMaxSingleRead);
    // O_DIRECT only for a piece that meets its alignment; the tail of a read
    // continued after a short answer may not.
    const bool direct = use_direct && file.direct_fd >= 0 && aligned(at, alignment) &&
                        aligned(want, alignment) &&
                        aligned(reinterpret_cast<uintptr_t>(into), alignment);
    const ssize_t got = pread_fn(direct ? file.direct_fd : file.buffered_fd, into,
                                 static_cast<size_t>(want), static_cast<off_t>(at));
    if (got < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      if (error == EINVAL && direct) {
        out.direct_refused = true;
        use_direct = false;  // the same bytes again, through the page cache
        continue;
      }
      out.ok = false;
      out.error = "io-odirect: reading " + where(file, at, length - done) + ": " +
                  std::strerror(error) + " (extent of " + std::to_string(length) +
                  " bytes at offset " + std::to_string(offset) + ")";
      return out;
    }
    if (got == 0) {
      if (at >= file.size) return out;  // the end of the file: the count tells the host
      // Nothing where the file had bytes when it was opened: try again, then
      // report (a file truncated under us, a flaky network filesystem).
      if (++stalls > kShortReadRetries) {
        out.ok = false;
        out.error = "io-odirect: short read of " + where(file, offset, length) + ": got " +
                    std::to_string(done) + " bytes after " + std::to_string(kShortReadRetries) +
                    " retries at offset " + std::to_string(at) + ", though the file had " +
                    std::to_string(file.size) + " bytes when opened";
        return out;
      }
      continue;
    }
    stalls = 0;
    done += static_cast<uint64_t>(got);
  }
  return out;
}

}  // namespace glmrt::io_odirect
