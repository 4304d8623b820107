#include "pread_upto.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace glmrt::io_support {
namespace {

// pread may return less than asked for above ~2 GiB on Linux; ask for less.
constexpr uint64_t kMaxSingleRead = 1ull << 30;

}  // namespace

std::string pread_upto(std::string_view plugin, const OpenFile& file, uint64_t offset,
                       uint64_t length, std::byte* destination, uint64_t& done) {
  done = 0;
  while (done < length) {
    const size_t want = static_cast<size_t>(std::min(length - done, kMaxSingleRead));
    const ssize_t got =
        ::pread(file.fd(), destination + done, want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      return std::string(plugin) + ": reading " + file.path() + " at offset " +
             std::to_string(offset + done) + " (" + std::to_string(length - done) +
             " bytes): " + std::strerror(error);
    }
    if (got == 0) break;
    done += static_cast<uint64_t>(got);
  }
  return {};
}

}  // namespace glmrt::io_support
