#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/atomic_file.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace glmrt {
namespace {

void sync_folder(const std::filesystem::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename happened; durability of the entry is best effort
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path file)
    : file_(std::move(file)),
      temporary_(file_.parent_path() /
                 fmt::format(".{}.{}.tmp", file_.filename().string(), ::getpid())) {
  struct stat st {};
  if (::stat(file_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    fail("{}: cannot write it: it is {}, and glmrt writes only regular files", file_.string(),
         describe_file_type(st.st_mode));
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("{}: cannot create: {}", temporary_.string(), std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temporary_, ec);
  }
}

void AtomicFile::write(std::string_view text) {
  if (fd_ < 0) fail("{}: write after commit", file_.string());
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("{}: cannot write: {}", temporary_.string(), std::strerror(errno));
    text.remove_prefix(static_cast<size_t>(n));
  }
}

void AtomicFile::commit(const std::function<void()>& before_rename) {
  if (fd_ < 0) fail("{}: committed twice", file_.string());
  if (::fsync(fd_) != 0) fail("{}: cannot fsync: {}", temporary_.string(), std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("{}: cannot close: {}", temporary_.string(), std::strerror(errno));
  if (before_rename) before_rename();
  if (std::rename(temporary_.c_str(), file_.c_str()) != 0)
    fail("{}: cannot replace it with {}: {}", file_.string(), temporary_.string(),
         std::strerror(errno));
  committed_ = true;
  sync_folder(file_.parent_path().empty() ? std::filesystem::path(".") : file_.parent_path());
}

void write_file_atomically(const std::filesystem::path& file, std::string_view text,
                           const std::function<void()>& before_rename) {
  AtomicFile out(file);
  out.write(text);
  out.commit(before_rename);
}

}  // namespace glmrt
