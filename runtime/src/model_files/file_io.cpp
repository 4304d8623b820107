#include <glmrt/model_files/file_io.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>

namespace glmrt::model_files {

int open_read_only(const std::filesystem::path& file) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer; reads of
  // a regular file ignore the flag.
  int fd;
  do {
    fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail("cannot open {} for reading: {}", file, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("cannot open {} for reading: it is not a regular file", file);
  }
  return fd;
}

void close_fd(int fd) noexcept {
  // A read-only descriptor has nothing to flush; close errors carry no data loss.
  if (fd >= 0) ::close(fd);
}

uint64_t file_size(int fd, const std::filesystem::path& file) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("cannot stat {}: {}", file, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail("{} is not a regular file", file);
  return static_cast<uint64_t>(st.st_size);
}

void pread_exact(int fd, uint64_t offset, std::span<std::byte> dst,
                 const std::filesystem::path& file, std::string_view what) {
  size_t done = 0;
  while (done < dst.size()) {
    // Linux transfers at most ~2 GiB per call; larger tensors take several.
    const ssize_t n =
        ::pread(fd, dst.data() + done, dst.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("reading {} from {} at byte {} failed: {}", what, file, offset + done,
           std::strerror(errno));
    }
    if (n == 0) {
      fail(
          "{} ends at byte {} while reading {} (expected {} bytes from byte {}); was the file "
          "truncated after it was opened?",
          file, offset + done, what, dst.size(), offset);
    }
    done += static_cast<size_t>(n);
  }
}

std::string read_whole_file(const std::filesystem::path& file) {
  // Binary files (an importance file) and copies of any model file go through here.
  constexpr InputKind kAnyModelFile{"the file", 8192 * kInputMiB, true};
  return read_input_file(file, kAnyModelFile);
}

}  // namespace glmrt::model_files
