#include <fcntl.h>
#include <glmrt/base/error.h>
#include <glmrt/model_maker/output_file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace glmrt {

OutputFile::OutputFile(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0644);
  if (fd_ < 0 && errno == EINVAL) {  // a filesystem without O_DIRECT (tmpfs): buffered
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  }
  if (fd_ < 0) fail("cannot create {}: {}", path, std::strerror(errno));
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string OutputFile::write_at(uint64_t offset, const std::byte* data, size_t size) const {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return fmt::format("writing {} at byte {} failed: {}", path_, offset + done,
                         n < 0 ? std::strerror(errno) : "no progress (is the disk full?)");
    done += static_cast<size_t>(n);
  }
  return {};
}

void OutputFile::reserve(uint64_t bytes) const {
  if (::fallocate(fd_, 0, 0, static_cast<off_t>(bytes)) == 0) return;
  if (errno != EOPNOTSUPP && errno != ENOSYS)
    fail("cannot reserve {} bytes for {}: {}", bytes, path_, std::strerror(errno));
}

void OutputFile::finish(uint64_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
    fail("cannot size {} to {} bytes: {}", path_, bytes, std::strerror(errno));
  if (::fdatasync(fd_) != 0) fail("cannot sync {} to disk: {}", path_, std::strerror(errno));
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail("closing {} failed: {}", path_, std::strerror(errno));
}

}  // namespace glmrt
