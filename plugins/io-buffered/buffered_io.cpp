#include "buffered_io.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>

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

std::string BufferedIo::read_extent(const glmrt_extent& extent, uint64_t,
                                    glmrt_extent_result& result) noexcept {
  const OpenFile& file = files_[static_cast<size_t>(extent.file)];
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

glmrt_status BufferedIo::submit(const glmrt_extent* extents, int64_t n_extents,
                                glmrt_extent_result* results, glmrt_io_ticket* ticket) noexcept {
  try {
    if (n_extents < 0 || (n_extents > 0 && (!extents || !results)) || !ticket) {
      error_ = "io-buffered: submit got no extent list, results or ticket";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    for (int64_t e = 0; e < n_extents; ++e) {
      if (std::string problem = check_extent(extents[e], e); !problem.empty()) {
        error_ = std::move(problem);
        return GLMRT_ERR_INVALID_ARGUMENT;
      }
    }
    *ticket = queue_->submit(extents, n_extents, results);
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("io-buffered: submit: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status BufferedIo::wait(glmrt_io_ticket ticket) noexcept {
  try {
    std::string error;
    const glmrt_status status = queue_->wait(ticket, error);
    if (status != GLMRT_OK) error_ = error.empty() ? "io-buffered: a read failed" : error;
    return status;
  } catch (const std::exception& e) {
    error_ = std::string("io-buffered: wait: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status BufferedIo::poll(glmrt_io_ticket ticket, int32_t* complete) noexcept {
  try {
    bool done = false;
    std::string error;
    if (!complete || !queue_->poll(ticket, done, error)) {
      error_ = "io-buffered: " + (complete ? error : std::string("poll got no flag to set"));
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    *complete = done ? 1 : 0;
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("io-buffered: poll: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status BufferedIo::read(const glmrt_extent* extents, int64_t n_extents) noexcept {
  try {
    std::vector<glmrt_extent_result> results(static_cast<size_t>(std::max<int64_t>(n_extents, 0)));
    glmrt_io_ticket ticket = 0;
    if (const glmrt_status s = submit(extents, n_extents, results.data(), &ticket); s != GLMRT_OK)
      return s;
    if (const glmrt_status s = wait(ticket); s != GLMRT_OK) return s;
    // read() promises every byte: a file that ends first is an error here.
    for (int64_t e = 0; e < n_extents; ++e) {
      if (results[static_cast<size_t>(e)].bytes == extents[e].length) continue;
      error_ = "io-buffered: " + files_[static_cast<size_t>(extents[e].file)].path() +
               " ends at byte " +
               std::to_string(extents[e].offset + results[static_cast<size_t>(e)].bytes) +
               ", before the " + std::to_string(extents[e].length) + " bytes wanted at offset " +
               std::to_string(extents[e].offset) + " (extent #" + std::to_string(e) + ")";
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
