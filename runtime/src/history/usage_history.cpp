#include <glmrt/base/error.h>
#include <glmrt/base/warning.h>
#include <glmrt/history/usage_history.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace glmrt {
namespace {

constexpr const char* kFileName = "expert-usage";

/// An exclusive flock on FOLDER/expert-usage.lock while alive: writers of the
/// same history take turns (the lock file itself stays, empty).
class HistoryLock {
 public:
  explicit HistoryLock(const std::filesystem::path& folder) {
    const auto path = folder / "expert-usage.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("{}: cannot open the lock file: {}", path.string(), std::strerror(errno));
    int rc;
    while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      const int err = errno;
      ::close(fd_);
      fail("{}: cannot lock: {}", path.string(), std::strerror(err));
    }
  }
  HistoryLock(const HistoryLock&) = delete;
  HistoryLock& operator=(const HistoryLock&) = delete;
  ~HistoryLock() { ::close(fd_); }  // closing releases the lock

 private:
  int fd_ = -1;
};

void create_folder(const std::filesystem::path& folder) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) fail("{}: cannot create the history folder: {}", folder.string(), ec.message());
}

}  // namespace

std::filesystem::path history_root(const std::optional<std::filesystem::path>& configured) {
  if (configured) return *configured;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return std::filesystem::path(xdg) / "glmrt";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "glmrt";
  return std::filesystem::temp_directory_path() / "glmrt-cache";
}

UsageHistory::UsageHistory(const std::optional<std::filesystem::path>& configured,
                           std::string model_id, int layers, int experts)
    : folder_(history_root(configured) / model_id),
      file_(folder_ / kFileName),
      model_id_(std::move(model_id)),
      totals_(layers, experts),
      unsaved_(layers, experts) {
  HistoryRead read = read_history(file_, model_id_, layers, experts);
  loaded_status_ = read.status;
  switch (read.status) {
    case HistoryStatus::ok:
      totals_ = std::move(read.usage);
      break;
    case HistoryStatus::missing:
      break;
    case HistoryStatus::future_version:
      read_only_ = true;
      warn("{}: expert usage history ignored and left as it is: {}", file_.string(), read.problem);
      break;
    case HistoryStatus::unreadable:
      // Not "replaced": a device or a FIFO there is never renamed over.
      warn("{}: expert usage history ignored: {}", file_.string(), read.problem);
      break;
    default:
      warn("{}: expert usage history ignored (it will be replaced): {}", file_.string(),
           read.problem);
  }
}

void UsageHistory::record(int layer, std::span<const int32_t> ids) {
  unsaved_.record(layer, ids);
  totals_.record(layer, ids);
}

void UsageHistory::add(const ExpertUsage& counts) {
  unsaved_.add(counts);
  totals_.add(counts);
}

void UsageHistory::save() {
  if (read_only_ || unsaved_.empty()) return;
  create_folder(folder_);
  HistoryLock lock(folder_);
  // Another process may have saved since we loaded: start from what the file
  // holds now (an unusable file starts from nothing), add only our new counts.
  HistoryRead now = read_history(file_, model_id_, totals_.layers(), totals_.experts());
  if (now.status == HistoryStatus::future_version) {
    read_only_ = true;
    warn("{}: expert usage history left as it is: {}", file_.string(), now.problem);
    return;
  }
  ExpertUsage merged = now.status == HistoryStatus::ok
                           ? std::move(now.usage)
                           : ExpertUsage(totals_.layers(), totals_.experts());
  merged.add(unsaved_);
  write_file_atomically(file_, format_history(model_id_, merged));
  totals_ = std::move(merged);
  unsaved_.clear();
}

void UsageHistory::reset() {
  std::error_code ec;
  if (std::filesystem::exists(folder_, ec)) {
    HistoryLock lock(folder_);
    std::filesystem::remove(file_, ec);
    if (ec) fail("{}: cannot remove: {}", file_.string(), ec.message());
  }
  totals_.clear();
  unsaved_.clear();
  read_only_ = false;
}

}  // namespace glmrt
