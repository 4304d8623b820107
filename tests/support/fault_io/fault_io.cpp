#include "fault_io.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

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

/// Reads [offset, offset + length) completely; returns the error text, empty on success.
std::string pread_fully(const OpenFile& file, uint64_t offset, uint64_t length,
                        std::byte* destination) {
  uint64_t done = 0;
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
    if (got == 0)
      return "fault-io: " + file.path() + " ends at byte " + std::to_string(offset + done) +
             ", before the " + std::to_string(length) + " bytes wanted at offset " +
             std::to_string(offset);
    done += static_cast<uint64_t>(got);
  }
  return {};
}

}  // namespace

OpenFile::OpenFile(OpenFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

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

ReadOutcome FaultIo::read_extent(const glmrt_extent& extent, const Fault& fault) const {
  if (fault.latency_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(fault.latency_ms));
  const OpenFile& file = files_[static_cast<size_t>(extent.file)];
  // A faulted read still delivers its first half, so a host that used the
  // buffer anyway would compute with partial data.
  const uint64_t delivered = fault.kind == FaultKind::none ? extent.length : extent.length / 2;
  if (std::string error =
          pread_fully(file, extent.offset, delivered, static_cast<std::byte*>(extent.destination));
      !error.empty())
    return {GLMRT_ERR_IO, std::move(error)};
  const std::string injected = " (injected on read #" + std::to_string(fault.read_number) + ")";
  switch (fault.kind) {
    case FaultKind::none:
      return {};
    case FaultKind::eio:
      return {GLMRT_ERR_IO,
              "fault-io: reading " + where(file, extent) + ": " + std::strerror(EIO) + injected};
    case FaultKind::short_read:
      if (!plan_.short_reads_reported()) return {};
      return {GLMRT_ERR_IO, "fault-io: short read of " + where(file, extent) + ": got " +
                                std::to_string(delivered) + " bytes" + injected};
  }
  return {GLMRT_ERR_INTERNAL, "fault-io: unknown fault kind"};
}

glmrt_status FaultIo::read(const glmrt_extent* extents, int64_t n_extents) noexcept {
  try {
    if (n_extents < 0 || (n_extents > 0 && !extents)) {
      error_ = "fault-io: read got no extent list";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    for (int64_t e = 0; e < n_extents; ++e) {
      if (std::string problem = check_extent(extents[e], e); !problem.empty()) {
        error_ = std::move(problem);
        return GLMRT_ERR_INVALID_ARGUMENT;
      }
    }
    for (int64_t e = 0; e < n_extents; ++e) {
      ReadOutcome outcome = read_extent(extents[e], plan_.next());
      if (outcome.status != GLMRT_OK) {
        error_ = std::move(outcome.error) + " (extent #" + std::to_string(e) + " of the batch)";
        return outcome.status;
      }
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
