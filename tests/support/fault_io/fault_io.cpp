#include "fault_io.h"

#include "pread_upto.h"

#include <errno.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

namespace glmrt::fault_io {
namespace {

std::string where(const OpenFile& file, const glmrt_extent& extent) {
  return file.path() + " at offset " + std::to_string(extent.offset) + " (" +
         std::to_string(extent.length) + " bytes)";
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
    if (std::string error = io_support::pread_upto(
            kName, file, extent.offset, wanted, static_cast<std::byte*>(extent.destination), done);
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
