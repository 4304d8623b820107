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

glmrt_status FaultIo::open_files(const char* const* paths, int32_t n_paths) noexcept {
  try {
    if (opened_) {
      error_ = "fault-io: open_files was already called; it opens the file set once";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    if (n_paths < 0 || (n_paths > 0 && !paths)) {
      error_ = "fault-io: open_files got no path list";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    std::vector<OpenFile> files;
    files.reserve(static_cast<size_t>(n_paths));
    for (int32_t i = 0; i < n_paths; ++i) {
      const std::string path = paths[i] ? paths[i] : "";
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        error_ = "fault-io: cannot open " + path + ": " + std::strerror(errno);
        return GLMRT_ERR_IO;
      }
      files.emplace_back(path, fd);
    }
    files_ = std::move(files);
    opened_ = true;
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("fault-io: open_files: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

std::string FaultIo::check_extent(const glmrt_extent& extent, int64_t index) const {
  if (extent.file < 0 || static_cast<size_t>(extent.file) >= files_.size())
    return "fault-io: extent #" + std::to_string(index) + " names file " +
           std::to_string(extent.file) + ", but " + std::to_string(files_.size()) +
           " files are open";
  if (extent.length > 0 && !extent.destination)
    return "fault-io: extent #" + std::to_string(index) + " of " +
           files_[static_cast<size_t>(extent.file)].path() + " has no destination";
  return {};
}

std::string FaultIo::read_extent(const glmrt_extent& extent, uint64_t sequence,
                                 glmrt_extent_result& result) noexcept {
  try {
    const Fault fault = plan_.fault_for(sequence);
    if (fault.latency_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(fault.latency_ms));
    const OpenFile& file = files_[static_cast<size_t>(extent.file)];
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

glmrt_status FaultIo::submit_numbered(const glmrt_extent* extents, int64_t n_extents,
                                      glmrt_extent_result* results, glmrt_io_ticket* ticket,
                                      uint64_t* first_read) {
  if (n_extents < 0 || (n_extents > 0 && (!extents || !results)) || !ticket) {
    error_ = "fault-io: submit got no extent list, results or ticket";
    return GLMRT_ERR_INVALID_ARGUMENT;
  }
  // Refused extents use up no read number: they are checked before queueing.
  for (int64_t e = 0; e < n_extents; ++e) {
    if (std::string problem = check_extent(extents[e], e); !problem.empty()) {
      error_ = std::move(problem);
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
  }
  *ticket = queue_->submit(extents, n_extents, results, first_read);
  return GLMRT_OK;
}

glmrt_status FaultIo::submit(const glmrt_extent* extents, int64_t n_extents,
                             glmrt_extent_result* results, glmrt_io_ticket* ticket) noexcept {
  try {
    return submit_numbered(extents, n_extents, results, ticket, nullptr);
  } catch (const std::exception& e) {
    error_ = std::string("fault-io: submit: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status FaultIo::wait(glmrt_io_ticket ticket) noexcept {
  try {
    std::string error;
    const glmrt_status status = queue_->wait(ticket, error);
    if (status != GLMRT_OK) error_ = error;
    return status;
  } catch (const std::exception& e) {
    error_ = std::string("fault-io: wait: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status FaultIo::poll(glmrt_io_ticket ticket, int32_t* complete) noexcept {
  try {
    bool done = false;
    std::string error;
    if (!complete || !queue_->poll(ticket, done, error)) {
      error_ = "fault-io: " + (complete ? error : std::string("poll got no flag to set"));
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    *complete = done ? 1 : 0;
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("fault-io: poll: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status FaultIo::read(const glmrt_extent* extents, int64_t n_extents) noexcept {
  try {
    std::vector<glmrt_extent_result> results(static_cast<size_t>(std::max<int64_t>(n_extents, 0)));
    glmrt_io_ticket ticket = 0;
    uint64_t first_read = 0;
    if (const glmrt_status s =
            submit_numbered(extents, n_extents, results.data(), &ticket, &first_read);
        s != GLMRT_OK)
      return s;
    const glmrt_status status = wait(ticket);
    if (status != GLMRT_OK) {
      for (int64_t e = 0; e < n_extents; ++e) {
        if (results[static_cast<size_t>(e)].status == GLMRT_OK) continue;
        error_ += " (extent #" + std::to_string(e) + " of the batch)";
        break;
      }
      return status;
    }
    // read() promises every byte: the end of the file is an error here. An
    // injected short read the settings say to hide is the exception: it
    // returns OK with half the bytes, the bug the host must catch itself.
    for (int64_t e = 0; e < n_extents; ++e) {
      const glmrt_extent& extent = extents[e];
      const uint64_t bytes = results[static_cast<size_t>(e)].bytes;
      if (bytes == extent.length) continue;
      if (plan_.fault_for(first_read + static_cast<uint64_t>(e)).kind == FaultKind::short_read)
        continue;
      error_ = "fault-io: " + files_[static_cast<size_t>(extent.file)].path() + " ends at byte " +
               std::to_string(extent.offset + bytes) + ", before the " +
               std::to_string(extent.length) + " bytes wanted at offset " +
               std::to_string(extent.offset) + " (extent #" + std::to_string(e) + " of the batch)";
      return GLMRT_ERR_IO;
    }
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("fault-io: read: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

void FaultIo::prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept {
  if (!extents) return;
  for (int64_t e = 0; e < n_extents; ++e) {
    const glmrt_extent& extent = extents[e];
    // A zero length would advise the whole rest of the file.
    if (extent.length == 0 || extent.file < 0 || static_cast<size_t>(extent.file) >= files_.size())
      continue;
    ::posix_fadvise(files_[static_cast<size_t>(extent.file)].fd(),
                    static_cast<off_t>(extent.offset), static_cast<off_t>(extent.length),
                    POSIX_FADV_WILLNEED);
  }
}

}  // namespace glmrt::fault_io
