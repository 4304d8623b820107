#include "direct_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

DirectIo::DirectIo(const glmrt_host_services& host, io_support::IoSettings settings)
    : host_(host),
      mirrors_(std::move(settings.mirrors)),
      cap_credit_(settings.cap_credit),
      queue_(std::make_unique<io_support::ReadQueue>(host, settings.threads, "io-odirect reader",
                                                     *this, false, settings.max_bytes_per_second,
                                                     settings.cap_credit)) {}

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

glmrt_status DirectIo::open_copy(const std::vector<std::string>& paths, std::vector<TwinFile>& out,
                                 std::string& error) {
  std::vector<TwinFile> files;
  files.reserve(paths.size());
  std::string first_refused, refusal;
  size_t refused = 0;
  for (const std::string& path : paths) {
    FileTwins twins;
    twins.path = path;
    twins.buffered_fd = ::open(twins.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (twins.buffered_fd < 0) {
      error = "io-odirect: cannot open " + twins.path + ": " + std::strerror(errno);
      return GLMRT_ERR_IO;
    }
    struct stat info {};
    if (::fstat(twins.buffered_fd, &info) != 0) {
      error = "io-odirect: cannot stat " + twins.path + ": " + std::strerror(errno);
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
  out = std::move(files);
  return GLMRT_OK;
}

glmrt_status DirectIo::open_file_set(const char* const* paths, int32_t n_paths,
                                     std::string& error) {
  std::vector<std::string> own;
  for (int32_t i = 0; i < n_paths; ++i) own.emplace_back(paths[i] ? paths[i] : "");
  io_support::CopyLayout layout;
  if (!io_support::lay_out_copies(kName, own, mirrors_, layout, error))
    return GLMRT_ERR_INVALID_ARGUMENT;
  std::vector<std::vector<TwinFile>> copies(layout.paths.size());
  for (size_t c = 0; c < copies.size(); ++c) {
    if (const glmrt_status s = open_copy(layout.paths[c], copies[c], error); s != GLMRT_OK)
      return s;
    if (c == 0) continue;
    for (size_t f = 0; f < copies[c].size(); ++f) {
      const FileTwins &original = copies[0][f].twins(), &copy = copies[c][f].twins();
      error = io_support::check_same_file(kName, original.path, original.buffered_fd, copy.path,
                                          copy.buffered_fd);
      if (!error.empty()) return GLMRT_ERR_INVALID_ARGUMENT;
    }
  }
  copies_ = std::move(copies);
  router_ = std::make_unique<io_support::CopyRouter>(layout.caps, cap_credit_);
  return GLMRT_OK;
}

std::string DirectIo::read_extent(const glmrt_extent& extent, uint64_t,
                                  glmrt_extent_result& result) noexcept {
  try {
    const io_support::CopyRouter::Lease lease = router_->begin(extent.length);  // ends last
    TwinFile& file = copies_[lease.copy()][static_cast<size_t>(extent.file)];
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

void DirectIo::prefetch_extent(size_t file, const glmrt_extent& extent) noexcept {
  const TwinFile& twin = copies_[router_->least_busy()][file];
  if (twin.direct()) return;
  ::posix_fadvise(twin.twins().buffered_fd, static_cast<off_t>(extent.offset),
                  static_cast<off_t>(extent.length), POSIX_FADV_WILLNEED);
}

}  // namespace glmrt::io_odirect
