#include <fcntl.h>
#include <glmrt/base/error.h>
#include <glmrt/model_maker/output_directory.h>
#include <glmrt/base/byte_size.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace glmrt {

namespace fs = std::filesystem;

void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open {} to sync it: {}", path, std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) fail("cannot sync {} to disk: {}", path, std::strerror(saved));
}

void write_small_file(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create {}: {}", path, std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      fail("writing {} failed: {}", path, std::strerror(saved));
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int saved = errno;
  if (::close(fd) != 0 || !synced) fail("cannot write {} to disk: {}", path, std::strerror(saved));
}

void check_free_space(const fs::path& dir, uint64_t needed, const std::string& what) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return;  // unknown: let the writes tell
  const uint64_t free_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  if (free_bytes < needed)
    fail("{} takes {} ({} bytes) but {} has {} ({} bytes) free", what, format_byte_size(needed),
         needed, dir, format_byte_size(free_bytes), free_bytes);
}

PartialDirectory::PartialDirectory(fs::path path) : path_(std::move(path)) {
  fs::create_directories(path_);
}

PartialDirectory::~PartialDirectory() {
  std::error_code ignored;
  if (!keep_) fs::remove_all(path_, ignored);
}

void PartialDirectory::rename_to(const fs::path& out) {
  sync_path(path_);
  std::error_code ec;
  fs::rename(path_, out, ec);
  if (ec) fail("cannot rename {} to {}: {}", path_, out, ec.message());
  keep_ = true;
  sync_path(out.parent_path());
}

}  // namespace glmrt
