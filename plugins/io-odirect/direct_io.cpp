#include "direct_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

namespace glmrt::io_odirect {
namespace {

/// The O_DIRECT twin of a file, or -1 with errno set when its filesystem
/// refuses O_DIRECT (EINVAL: tmpfs before Linux 6.6, procfs, some FUSE and
/// network filesystems).
int open_direct(const std::string& path) {
#ifdef IO_ODIRECT_REFUSING_FOR_TESTS
  // The tests' build of this plugin stands in for such a filesystem, which
  // the machine running them may not have: files named so are refused.
  if (path.find("refuses-o-direct") != std::string::npos) {
    errno = EINVAL;
    return -1;
  }
#endif
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
}

}  // namespace

TwinFile::TwinFile(TwinFile&& other) noexcept
    : twins_(std::move(other.twins_)), direct_off_(other.direct_off_.load()) {
  other.twins_.direct_fd = -1;
  other.twins_.buffered_fd = -1;
}

TwinFile::~TwinFile() {
  if (twins_.direct_fd >= 0) ::close(twins_.direct_fd);
  if (twins_.buffered_fd >= 0) ::close(twins_.buffered_fd);
}

DirectIo::DirectIo(const glmrt_host_services& host, DirectSettings settings)
    : host_(host),
      queue_(std::make_unique<io_support::ReadQueue>(host, settings.threads, "io-odirect reader",
                                                     *this)) {}

void DirectIo::warn_fallback(const std::string& file, const std::string& why,
                             size_t more_files) noexcept {
  if (warned_.exchange(true) || !host_.log) return;
  const std::string message =
      "io-odirect: " + file +
      (more_files ? " (and " + std::to_string(more_files) + " more files)" : std::string()) +
      " cannot be read with O_DIRECT (" + why +
      "); reading through the page cache instead, which is slower and uses page cache memory";
  host_.log(host_.context, GLMRT_LOG_WARNING, message.c_str());
}

glmrt_status DirectIo::open_files(const char* const* paths, int32_t n_paths) noexcept {
  try {
    if (opened_) {
      error_ = "io-odirect: open_files was already called; it opens the file set once";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    if (n_paths < 0 || (n_paths > 0 && !paths)) {
      error_ = "io-odirect: open_files got no path list";
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    std::vector<TwinFile> files;
    files.reserve(static_cast<size_t>(n_paths));
    std::string first_refused, refusal;
    size_t refused = 0;
    for (int32_t i = 0; i < n_paths; ++i) {
      FileTwins twins;
      twins.path = paths[i] ? paths[i] : "";
      twins.buffered_fd = ::open(twins.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (twins.buffered_fd < 0) {
        error_ = "io-odirect: cannot open " + twins.path + ": " + std::strerror(errno);
        return GLMRT_ERR_IO;
      }
      struct stat info {};
      if (::fstat(twins.buffered_fd, &info) != 0) {
        error_ = "io-odirect: cannot stat " + twins.path + ": " + std::strerror(errno);
        ::close(twins.buffered_fd);
        return GLMRT_ERR_IO;
      }
      twins.size = static_cast<uint64_t>(info.st_size);
      twins.direct_fd = open_direct(twins.path);
      if (twins.direct_fd < 0) {
        if (refused++ == 0) {
          first_refused = twins.path;
          refusal = std::strerror(errno);
        }
      }
      files.emplace_back(std::move(twins));
    }
    if (refused) warn_fallback(first_refused, refusal, refused - 1);
    files_ = std::move(files);
    opened_ = true;
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("io-odirect: open_files: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

std::string DirectIo::check_extent(const glmrt_extent& extent, int64_t index) const {
  if (extent.file < 0 || static_cast<size_t>(extent.file) >= files_.size())
    return "io-odirect: extent #" + std::to_string(index) + " names file " +
           std::to_string(extent.file) + ", but " + std::to_string(files_.size()) +
           " files are open";
  if (extent.length > 0 && !extent.destination)
    return "io-odirect: extent #" + std::to_string(index) + " of " +
           files_[static_cast<size_t>(extent.file)].twins().path + " has no destination";
  return {};
}

std::string DirectIo::read_extent(const glmrt_extent& extent, uint64_t,
                                  glmrt_extent_result& result) noexcept {
  try {
    TwinFile& file = files_[static_cast<size_t>(extent.file)];
    const ExtentRead r = read_extent_fully(file.twins(), extent.offset, extent.length,
                                           static_cast<std::byte*>(extent.destination),
                                           kDirectAlignment, file.direct(), &::pread);
    if (r.direct_refused) {
      file.turn_direct_off();
      warn_fallback(file.twins().path, "the filesystem refused an aligned O_DIRECT read", 0);
    }
    result = {r.bytes, r.ok ? GLMRT_OK : GLMRT_ERR_IO, 0};
    return r.error;
  } catch (const std::exception& e) {
    result = {0, GLMRT_ERR_INTERNAL, 0};
    return std::string("io-odirect: ") + e.what();
  }
}

glmrt_status DirectIo::submit(const glmrt_extent* extents, int64_t n_extents,
                              glmrt_extent_result* results, glmrt_io_ticket* ticket) noexcept {
  try {
    if (n_extents < 0 || (n_extents > 0 && (!extents || !results)) || !ticket) {
      error_ = "io-odirect: submit got no extent list, results or ticket";
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
    error_ = std::string("io-odirect: submit: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status DirectIo::wait(glmrt_io_ticket ticket) noexcept {
  try {
    std::string error;
    const glmrt_status status = queue_->wait(ticket, error);
    if (status != GLMRT_OK) error_ = error.empty() ? "io-odirect: a read failed" : error;
    return status;
  } catch (const std::exception& e) {
    error_ = std::string("io-odirect: wait: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status DirectIo::poll(glmrt_io_ticket ticket, int32_t* complete) noexcept {
  try {
    bool done = false;
    std::string error;
    if (!complete || !queue_->poll(ticket, done, error)) {
      error_ = "io-odirect: " + (complete ? error : std::string("poll got no flag to set"));
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    *complete = done ? 1 : 0;
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("io-odirect: poll: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

glmrt_status DirectIo::read(const glmrt_extent* extents, int64_t n_extents) noexcept {
  try {
    std::vector<glmrt_extent_result> results(static_cast<size_t>(std::max<int64_t>(n_extents, 0)));
    glmrt_io_ticket ticket = 0;
    if (const glmrt_status s = submit(extents, n_extents, results.data(), &ticket); s != GLMRT_OK)
      return s;
    if (const glmrt_status s = wait(ticket); s != GLMRT_OK) return s;
    // read() promises every byte: a file that ends first is an error here.
    for (int64_t e = 0; e < n_extents; ++e) {
      const uint64_t bytes = results[static_cast<size_t>(e)].bytes;
      if (bytes == extents[e].length) continue;
      error_ = "io-odirect: " + files_[static_cast<size_t>(extents[e].file)].twins().path +
               " ends at byte " + std::to_string(extents[e].offset + bytes) + ", before the " +
               std::to_string(extents[e].length) + " bytes wanted at offset " +
               std::to_string(extents[e].offset) + " (extent #" + std::to_string(e) + ")";
      return GLMRT_ERR_IO;
    }
    return GLMRT_OK;
  } catch (const std::exception& e) {
    error_ = std::string("io-odirect: read: ") + e.what();
    return GLMRT_ERR_INTERNAL;
  }
}

void DirectIo::prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept {
  if (!extents) return;
  for (int64_t e = 0; e < n_extents; ++e) {
    const glmrt_extent& extent = extents[e];
    if (extent.length == 0 || extent.file < 0 || static_cast<size_t>(extent.file) >= files_.size())
      continue;
    const TwinFile& file = files_[static_cast<size_t>(extent.file)];
    if (file.direct()) continue;
    ::posix_fadvise(file.twins().buffered_fd, static_cast<off_t>(extent.offset),
                    static_cast<off_t>(extent.length), POSIX_FADV_WILLNEED);
  }
}

}  // namespace glmrt::io_odirect
