// Writing a routing trace: into a temporary file renamed into place only when
// every step was written, never over anything but an earlier trace.
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/warning.h>
#include <glmrt/history/routing_trace.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

/// Whether `inner` is `outer` or lies below it (both made absolute, links resolved).
bool is_inside_folder(const fs::path& inner, const fs::path& outer) {
  std::error_code ec_inner, ec_outer;
  const fs::path a = fs::weakly_canonical(fs::absolute(inner), ec_inner);
  const fs::path b = fs::weakly_canonical(fs::absolute(outer), ec_outer);
  if (ec_inner || ec_outer) return false;
  return std::mismatch(b.begin(), b.end(), a.begin(), a.end()).first == b.end();
}

/// Refuses to replace a file that is not an earlier trace: a mistyped path
/// must never cost a model shard or a user's file.
void check_replaceable(const fs::path& file, const fs::path& model_dir) {
  if (!model_dir.empty() &&
      is_inside_folder(file.parent_path().empty() ? "." : file.parent_path(), model_dir))
    fail(
        "{}: will not write a routing trace inside the model directory {} (its files are the "
        "model's); choose a path outside it",
        file.string(), model_dir.string());
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // a new file
    fail("{}: cannot check what it is before writing a routing trace there: {}", file.string(),
         std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    fail("{}: will not write a routing trace there: it is {}, not a file", file.string(),
         describe_file_type(st.st_mode));
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    fail("{}: cannot check what it holds before replacing it: {}", file.string(),
         std::strerror(errno));
  constexpr std::string_view kMagic = "glmrt-routing-trace ";
  char start[kMagic.size()] = {};
  ssize_t n;
  do {
    n = ::read(fd, start, sizeof start);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof start) || std::string_view(start, sizeof start) != kMagic)
    fail(
        "{}: exists and is not a routing trace; glmrt replaces only an earlier trace: remove it "
        "or choose another name",
        file.string());
}

}  // namespace

ExpertUsage RoutingTrace::usage() const {
  ExpertUsage usage(layers, experts);
  for (const RoutingStep& step : steps) usage.record(step.layer, step.experts);
  return usage;
}

RoutingTraceWriter::RoutingTraceWriter(const fs::path& file, const std::string& model_id,
                                       RoutingShape shape, const fs::path& model_dir) {
  check_replaceable(file, model_dir);
  out_ = std::make_unique<AtomicFile>(file);
  out_->write(fmt::format("glmrt-routing-trace {}\nmodel {}\nshape {} {} {}\n",
                          kRoutingTraceVersion, model_id, shape.layers, shape.experts,
                          shape.top_k));
}

RoutingTraceWriter::~RoutingTraceWriter() {
  if (out_)
    warn("{}: routing trace not written (the run did not finish); {}", out_->file().string(),
         failure_.empty() ? "nothing was replaced" : failure_);
}

void RoutingTraceWriter::on_routed(int layer, int64_t positions, std::span<const int32_t> experts) {
  if (!out_ || !failure_.empty()) return;
  std::string line = fmt::format("{} {}", layer, positions);
  for (int32_t id : experts) fmt::format_to(std::back_inserter(line), " {}", id);
  line += '\n';
  try {
    out_->write(line);
    ++steps_;
  } catch (const std::exception& e) {
    failure_ = e.what();
    warn("routing trace: {}; the run goes on, the trace will not be kept", failure_);
  }
}

void RoutingTraceWriter::close() {
  if (!out_) return;
  // Released first: whatever happens, the destructor has nothing left to do.
  const std::unique_ptr<AtomicFile> out = std::move(out_);
  const fs::path file = out->file();
  try {
    if (!failure_.empty()) fail("{}", failure_);
    out->write(fmt::format("end {}\n", steps_));
    out->commit();
  } catch (const std::exception& e) {
    fail("{}: writing the routing trace failed: {}; {} was left as it was", file.string(), e.what(),
         file.string());
  }
}

}  // namespace glmrt
