#include <fcntl.h>
#include <glmrt/base/error.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/model_maker/make_model.h>
#include <glmrt/model_maker/model_plan.h>
#include <glmrt/model_maker/planned_file_writer.h>
#include <glmrt/model_maker/presets.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace glmrt {
namespace {

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

void check_destination(const fs::path& out, const fs::path& partial) {
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec)))
    fail("--out {} already exists and is not an empty directory", out);
  if (fs::exists(partial, ec))
    fail("{} exists: an earlier make-model was interrupted there; remove it and run again",
         partial);
}

void check_free_space(const fs::path& dir, uint64_t needed) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return;  // unknown: let the writes tell
  const uint64_t free_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  if (free_bytes < needed)
    fail("the model takes {:.2f} GB but {} has {:.2f} GB free", needed / 1e9, dir,
         free_bytes / 1e9);
}

// Removes DIR.partial unless the model was completed (and renamed away).
class PartialDirectory {
 public:
  explicit PartialDirectory(fs::path path) : path_(std::move(path)) {
    fs::create_directories(path_);
  }
  ~PartialDirectory() {
    std::error_code ignored;
    if (!done_) fs::remove_all(path_, ignored);
  }
  PartialDirectory(const PartialDirectory&) = delete;
  PartialDirectory& operator=(const PartialDirectory&) = delete;
  const fs::path& path() const { return path_; }
  void rename_to(const fs::path& out) {
    std::error_code ec;
    fs::rename(path_, out, ec);
    if (ec) fail("cannot rename {} to {}: {}", path_, out, ec.message());
    done_ = true;
  }

 private:
  fs::path path_;
  bool done_ = false;
};

}  // namespace

MakeModelResult make_model(const MakeModelOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.out.empty()) fail("--out: no directory given");
  const nlohmann::ordered_json config = model_preset_config(o.preset, o.moe_layers, o.mtp);
  const ModelPlan plan = plan_model(config, o.hot_skew);
  const fs::path out = fs::absolute(o.out).lexically_normal();
  const fs::path partial = out.string() + ".partial";
  check_destination(out, partial);
  check_free_space(out.parent_path(), plan.total_bytes());

  PartialDirectory dir(partial);
  std::atomic<uint64_t> written{0};
  {
    ProgressBar bar("writing", plan.total_bytes());
    for (const PlannedFile& file : plan.files)
      write_planned_file(dir.path() / file.name, file, o.seed, written, bar);
    bar.finish();
  }
  write_small_file(dir.path() / "model.safetensors.index.json", plan.index().dump(2));
  // config.json last: without it the folder is not a model.
  write_small_file(dir.path() / "config.json", config.dump(2));
  sync_path(dir.path());
  dir.rename_to(out);
  sync_path(out.parent_path());

  MakeModelResult result;
  result.bytes = plan.total_bytes();
  result.files = static_cast<int>(plan.files.size());
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace glmrt
