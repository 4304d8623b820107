#include <glmrt/base/atomic_file.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace glmrt {

bool path_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

namespace {

namespace fs = std::filesystem;

void sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename happened; durability of the entry is best effort
  ::fsync(fd);
  ::close(fd);
}

fs::path folder_of(const fs::path& file) {
  return file.parent_path().empty() ? fs::path(".") : file.parent_path();
}

/// `p` made absolute with every link resolved (as far as it exists);
/// nullopt when that fails (a loop, a folder that cannot be searched).
std::optional<fs::path> resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  if (ec) return std::nullopt;
  return r;
}

/// Throws when `file` (the entry that would be replaced, or where a link
/// there leads) is the model folder, lies inside it, or is one of the
/// files or folders it holds or links to.
void check_apart_from_model(const fs::path& file, const OutputRule& rule) {
  const auto folder = resolved(rule.model_folder);
  if (!folder) fail("{}: cannot resolve the model folder's path", rule.model_folder.string());
  // The entry itself (a link there is replaced, not followed) and its target.
  const auto parent = resolved(folder_of(file));
  const auto target = resolved(file);
  if (!parent || !target)
    fail("{}: cannot resolve the path to check it is apart from the model folder {}", file.string(),
         rule.model_folder.string());
  const fs::path entry = *parent / file.filename();
  if (path_within(entry, *folder) || path_within(*target, *folder))
    fail(
        "{}: will not write {} inside the model directory {} (its files are the model's), even "
        "with --force; choose a path outside it",
        file.string(), rule.kind.what, rule.model_folder.string());
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(*folder, ec)) {
    const auto linked = resolved(e.path());
    if (linked && (path_within(entry, *linked) || path_within(*target, *linked)))
      fail(
          "{}: will not write {} there: it is {}, which the model directory {} links to (its "
          "files are the model's), even with --force; choose another path",
          file.string(), rule.kind.what, linked->string(), rule.model_folder.string());
  }
}

/// Throws unless what is at `file` may be replaced: nothing, an empty
/// regular file, or one the kind recognises (any regular one with --force).
void check_replaceable(const fs::path& file, const OutputRule& rule) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link {};
    if (err == ENOENT) return;  // a new file (or a dangling link, which the rename replaces)
    if (err == ELOOP && ::lstat(file.c_str(), &link) == 0)
      fail("{}: will not write {} there: its symbolic links form a loop", file.string(),
           rule.kind.what);
    fail("{}: cannot check what it is before writing {} there: {}", file.string(), rule.kind.what,
         std::strerror(err));
  }
  if (!S_ISREG(st.st_mode))
    fail(
        "{}: will not write {} there: it is {}; glmrt writes only regular files, and never "
        "replaces a device, a FIFO, a socket or a folder, even with --force",
        file.string(), rule.kind.what, describe_file_type(st.st_mode));
  if (st.st_size == 0 || rule.force || !rule.kind.recognises) return;
  // Opened to look: a file that cannot be read cannot be told apart.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    fail("{}: cannot check what it holds before replacing it: {}", file.string(),
         std::strerror(errno));
  ::close(fd);
  if (!rule.kind.recognises(file))
    fail(
        "{}: exists and is not {}; without --force glmrt replaces only an empty file or {} it "
        "wrote before: pass --force to replace it, or choose another name",
        file.string(), rule.kind.what, rule.kind.what);
}

}  // namespace

void check_output_file(const fs::path& file, const OutputRule& rule) {
  if (file.empty()) fail("no file name given to write {} to", rule.kind.what);
  if (!rule.model_folder.empty()) check_apart_from_model(file, rule);
  check_replaceable(file, rule);
}

std::string read_file_head(const fs::path& file, size_t max_bytes) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  const input_file_detail::Descriptor guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return {};
  std::string head(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    const ssize_t n = ::read(fd, head.data() + got, max_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  head.resize(got);
  return head;
}

int create_file_beside(const fs::path& file, std::string_view tag, fs::path& created) {
  for (int attempt = 0;; ++attempt) {
    created = folder_of(file) / fmt::format(".{}.{}{}{}.{}", file.filename().string(), ::getpid(),
                                            attempt ? "-" : "",
                                            attempt ? std::to_string(attempt) : "", tag);
    const int fd = ::open(created.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    // A file of that name is someone's (a crashed run's, or the user's): never touched.
    if (errno != EEXIST || attempt == 100)
      fail("{}: cannot create a temporary file beside it ({}): {}", file.string(), created.string(),
           std::strerror(errno));
  }
}

AtomicFile::AtomicFile(fs::path file, OutputRule rule)
    : file_(std::move(file)), rule_(std::move(rule)) {
  check_output_file(file_, rule_);
  fd_ = create_file_beside(file_, "tmp", temporary_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_.empty()) {
    std::error_code ec;
    fs::remove(temporary_, ec);
  }
}

void AtomicFile::write(std::string_view text) {
  if (fd_ < 0) fail("{}: write after commit", file_.string());
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("{}: cannot write: {}", temporary_.string(), std::strerror(errno));
    if (n == 0) fail("{}: cannot write: the system wrote nothing", temporary_.string());
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
  // Again: a device, a FIFO or a user's file may have appeared meanwhile.
  check_output_file(file_, rule_);
  if (std::rename(temporary_.c_str(), file_.c_str()) != 0)
    fail("{}: cannot replace it with {}: {}", file_.string(), temporary_.string(),
         std::strerror(errno));
  committed_ = true;
  sync_folder(folder_of(file_));
}

void write_file_atomically(const fs::path& file, std::string_view text,
                           const std::function<void()>& before_rename) {
  AtomicFile out(file);
  out.write(text);
  out.commit(before_rename);
}

void write_file_atomically(const fs::path& file, std::string_view text, const OutputRule& rule) {
  AtomicFile out(file, rule);
  out.write(text);
  out.commit();
}

}  // namespace glmrt
