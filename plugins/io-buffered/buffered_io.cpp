#include "buffered_io.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

namespace glmrt::io_buffered {
namespace {

// Large extents are split so one 20 MB expert is read by several threads and
// the drive sees several requests at once.
constexpr uint64_t kChunkBytes = 4ull << 20;
// pread may return less than asked for above ~2 GiB on Linux; ask for less.
constexpr uint64_t kMaxSingleRead = 1ull << 30;

struct Chunk {
  int64_t extent;
  uint64_t offset;
  uint64_t length;
  std::byte* destination;
};

}  // namespace

OpenFile::OpenFile(OpenFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

BufferedIo::BufferedIo(const glmrt_host_services& host, IoSettings settings)
    : threads_(settings.threads > 0 ? settings.threads : std::max(1, host.n_threads)),
      drop_after_read_(settings.drop_after_read) {}

glmrt_status BufferedIo::open_files(const char* const* paths, int32_t n_paths) noexcept {
  try {
    if (opened_) {
      error_ = "io-buffered: open_files was already called; it opens the file set once";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    if (n_paths < 0 || (n_paths > 0 && !paths)) {
      error_ = "io-buffered: open_files got no path list";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    std::vector<OpenFile> files;
    files.reserve(static_cast<size_t>(n_paths));
    for (int32_t i = 0; i < n_paths; ++i) {
      const std::string path = paths[i] ? paths[i] : "";
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        error_ = "io-buffered: cannot open " + path + ": " + std::strerror(errno);
        return GLMRT_ERR_IO;
      }
      files.emplace_back(path, fd);
    }
    files_ = std::move(files);
    opened_ = true;
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("io-buffered: open_files: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

std::string BufferedIo::check_extent(const glmrt_extent& extent, int64_t index) const {
  if (extent.file < 0 || static_cast<size_t>(extent.file) >= files_.size())
    return "io-buffered: extent #" + std::to_string(index) + " names file " +
           std::to_string(extent.file) + ", but " + std::to_string(files_.size()) +
           " files are open";
  if (extent.length > 0 && !extent.destination)
    return "io-buffered: extent #" + std::to_string(index) + " of " +
           files_[static_cast<size_t>(extent.file)].path() + " has no destination";
  return {};
}

std::string BufferedIo::read_range(const OpenFile& file, uint64_t offset, uint64_t length,
                                   std::byte* destination) const noexcept {
  uint64_t done = 0;
  while (done < length) {
    const size_t want = static_cast<size_t>(std::min(length - done, kMaxSingleRead));
    const ssize_t got =
        ::pread(file.fd(), destination + done, want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      return "io-buffered: reading " + file.path() + " at offset " + std::to_string(offset + done) +
             " (" + std::to_string(length - done) + " bytes): " + std::strerror(error);
    }
    if (got == 0)
      return "io-buffered: " + file.path() + " ends at byte " + std::to_string(offset + done) +
             ", before the " + std::to_string(length) + " bytes wanted at offset " +
             std::to_string(offset);
    done += static_cast<uint64_t>(got);
  }
  if (drop_after_read_)
    ::posix_fadvise(file.fd(), static_cast<off_t>(offset), static_cast<off_t>(length),
                    POSIX_FADV_DONTNEED);
  return {};
}

glmrt_status BufferedIo::read(const glmrt_extent* extents, int64_t n_extents) noexcept {
  try {
    if (n_extents < 0 || (n_extents > 0 && !extents)) {
      error_ = "io-buffered: read got no extent list";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    std::vector<Chunk> chunks;
    for (int64_t e = 0; e < n_extents; ++e) {
      const glmrt_extent& extent = extents[e];
      if (std::string problem = check_extent(extent, e); !problem.empty()) {
        error_ = std::move(problem);
        return GLMRT_ERR_INVALID_ARGUMENT;
      }
      auto* destination = static_cast<std::byte*>(extent.destination);
      for (uint64_t begin = 0; begin < extent.length; begin += kChunkBytes)
        chunks.push_back({e, extent.offset + begin, std::min(kChunkBytes, extent.length - begin),
                          destination + begin});
    }
    const int64_t n_chunks = static_cast<int64_t>(chunks.size());
    std::vector<std::string> errors(chunks.size());
    const int team =
        static_cast<int>(std::clamp<int64_t>(threads_, 1, std::max<int64_t>(n_chunks, 1)));
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
    for (int64_t c = 0; c < n_chunks; ++c) {
      const Chunk& chunk = chunks[static_cast<size_t>(c)];
      const OpenFile& file = files_[static_cast<size_t>(extents[chunk.extent].file)];
      errors[static_cast<size_t>(c)] =
          read_range(file, chunk.offset, chunk.length, chunk.destination);
    }
    // Report the first failing chunk so the message does not depend on timing.
    for (size_t c = 0; c < errors.size(); ++c) {
      if (errors[c].empty()) continue;
      const glmrt_extent& extent = extents[chunks[c].extent];
      error_ = errors[c] + " (extent #" + std::to_string(chunks[c].extent) + ": " +
               std::to_string(extent.length) + " bytes at offset " + std::to_string(extent.offset) +
               ")";
      return GLMRT_ERR_IO;
    }
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("io-buffered: read: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

void BufferedIo::prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept {
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

}  // namespace glmrt::io_buffered
