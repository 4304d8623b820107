#include "fault_io.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>

namespace glmrt::fault_io {
namespace {

// pread may return less than asked for above ~2 GiB on Linux; ask for less.
constexpr uint64_t kMaxSingleRead = 1ull << 30;

std::string where(const OpenFile& file, const glmrt_extent& extent) {
  return file.path() + " at offset " + std::to_string(extent.offset) + " (" +
         std::to_string(extent.length) + " bytes)";
}

/// Reads up to `length` bytes at `offset`, stopping at the end of the file;
/// returns the error text (empty on success) and sets `done`.
std::string pread_upto(const OpenFile& file, uint64_t offset, uint64_t length,
                       std::byte* destination, uint64_t& done) {
  done = 0;
  while (done < length) {
    const size_t want = static_cast<size_t>(std::min(length - done, kMaxSingleRead));
    const ssize_t got =
        ::pread(file.fd(), destination + done, want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      return "fault-io: reading " + file.path() + " at offset " + std::to_string(offset + done) +
             ": " + std::strerror(error);
    }
    if (got == 0) break;
    done += static_cast<uint64_t>(got);
  }
  return {};
}

}  // namespace

FaultIo::FaultIo(const glmrt_host_services& host, const FaultSettings& settings)
    : plan_(settings),
      queue_(std::make_unique<io_support::ReadQueue>(host, 1, "fault-io reader", *this,
                                                     /*stop_batch_on_failure=*/true)) {}

std::string FaultIo::read_extent(const glmrt_extent& extent, uint64_t sequence,
                                 glmrt_extent_result& result) noexcept {
  try {
    const Fault fault = plan_.fault_for(sequence);
    if (fault.latency_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(fault.latency_ms));
    const OpenFile& file = this->file(static_cast<size_t>(extent.file));
    // A faulted read still delivers its first half, so a host that used the
    // buffer anyway would compute with partial data.
    const uint64_t wanted = fault.kind == FaultKind::none ? extent.length : extent.length / 2;
    uint64_t done = 0;
    if (std::string error = pread_upto(file, extent.offset, wanted,
                                       static_cast<std::byte*>(extent.destination), done);
        !error.empty()) {
      result = {done, GLMRT_ERR_IO, 0};
      return error + " (extent of read #" + std::to_string(sequence) + ")";
    }
    const std::string injected = " (injected on read #" + std::to_string(fault.read_number) + ")";
    result = {done, GLMRT_OK, 0};
    switch (fault.kind) {
      case FaultKind::none:
        return {};
      case FaultKind::eio:
        result.status = GLMRT_ERR_IO;
        return "fault-io: reading " + where(file, extent) + ": " + std::strerror(EIO) + injected;
      case FaultKind::short_read:
        if (!plan_.short_reads_reported()) return {};
        result.status = GLMRT_ERR_IO;
        return "fault-io: short read of " + where(file, extent) + ": got " + std::to_string(done) +
               " bytes" + injected;
    }
    result.status = GLMRT_ERR_INTERNAL;
    return "fault-io: unknown fault kind";
  } catch (const std::exception& e) {
    result.status = GLMRT_ERR_INTERNAL;
    return std::string("fault-io: ") + e.what();
  }
}

}  // namespace glmrt::fault_io
