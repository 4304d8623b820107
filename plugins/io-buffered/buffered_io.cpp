#include "buffered_io.h"

#include "pread_upto.h"

#include <fcntl.h>

#include <algorithm>
#include <exception>

namespace glmrt::io_buffered {

BufferedIo::BufferedIo(const glmrt_host_services& host, IoSettings settings)
    : PlainFileIo(settings.mirrors, settings.cap_credit),
      drop_after_read_(settings.drop_after_read),
      queue_(std::make_unique<io_support::ReadQueue>(
          host, settings.threads > 0 ? settings.threads : std::max(1, host.n_threads),
          "io-buffered reader", *this, false, settings.max_bytes_per_second, settings.cap_credit)) {
}

std::string BufferedIo::read_extent(const glmrt_extent& extent, uint64_t,
                                    glmrt_extent_result& result) noexcept {
  try {
    const io_support::CopyRouter::Lease lease = router().begin(extent.length);  // ends last
    const OpenFile& file = this->file(static_cast<size_t>(extent.file), lease.copy());
    uint64_t done = 0;
    std::string error = io_support::pread_upto(kName, file, extent.offset, extent.length,
                                               static_cast<std::byte*>(extent.destination), done);
    if (error.empty() && drop_after_read_ && done > 0)
      ::posix_fadvise(file.fd(), static_cast<off_t>(extent.offset), static_cast<off_t>(done),
                      POSIX_FADV_DONTNEED);
    result = {done, error.empty() ? GLMRT_OK : GLMRT_ERR_IO, 0};
    return error;
  } catch (const std::exception& e) {
    result = {0, GLMRT_ERR_INTERNAL, 0};
    return std::string("io-buffered: ") + e.what();
  }
}

}  // namespace glmrt::io_buffered
