#include "buffered_io.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace glmrt::io_buffered {
namespace {

// pread may return less than asked for above ~2 GiB on Linux; ask for less.
constexpr uint64_t kMaxSingleRead = 1ull << 30;

}  // namespace

BufferedIo::BufferedIo(const glmrt_host_services& host, IoSettings settings)
    : drop_after_read_(settings.drop_after_read),
      queue_(std::make_unique<io_support::ReadQueue>(
          host, settings.threads > 0 ? settings.threads : std::max(1, host.n_threads),
          "io-buffered reader", *this)) {}

std::string BufferedIo::read_extent(const glmrt_extent& extent, uint64_t,
                                    glmrt_extent_result& result) noexcept {
  const OpenFile& file = this->file(static_cast<size_t>(extent.file));
  auto* destination = static_cast<std::byte*>(extent.destination);
  uint64_t done = 0;
  while (done < extent.length) {
    const size_t want = static_cast<size_t>(std::min(extent.length - done, kMaxSingleRead));
    const ssize_t got =
        ::pread(file.fd(), destination + done, want, static_cast<off_t>(extent.offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      result = {done, GLMRT_ERR_IO, 0};
      return "io-buffered: reading " + file.path() + " at offset " +
             std::to_string(extent.offset + done) + " (" + std::to_string(extent.length - done) +
             " bytes): " + std::strerror(error);
    }
    if (got == 0) break;  // the end of the file: the byte count tells the host
    done += static_cast<uint64_t>(got);
  }
  if (drop_after_read_ && done > 0)
    ::posix_fadvise(file.fd(), static_cast<off_t>(extent.offset), static_cast<off_t>(done),
                    POSIX_FADV_DONTNEED);
  result = {done, GLMRT_OK, 0};
  return {};
}

}  // namespace glmrt::io_buffered
