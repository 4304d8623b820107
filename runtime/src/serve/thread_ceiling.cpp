#include <glmrt/base/cgroup_files.h>
#include <glmrt/base/error.h>
#include <glmrt/profile/profile.h>
#include <glmrt/serve/thread_ceiling.h>

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>

namespace glmrt::serve {
namespace {

void lower_to(ThreadCeiling& ceiling, std::size_t room, const std::string& source) {
  const std::size_t half = room / 2;
  if (half < ceiling.threads) {
    ceiling.threads = half;
    ceiling.reason = "half of the " + std::to_string(room) + " processes " + source;
  }
}

void consider_pids_cgroup(ThreadCeiling& ceiling, const std::filesystem::path& dir) {
  const auto limit = read_cgroup_number(dir / "pids.max");
  if (!limit) return;
  const uint64_t used = read_cgroup_number(dir / "pids.current").value_or(0);
  lower_to(ceiling, *limit > used ? *limit - used : 0, (dir / "pids.max").string() + " leaves");
}

}  // namespace

ThreadCeiling http_thread_ceiling(const ProcessLimitFiles& files) {
  ThreadCeiling ceiling;
  ceiling.reason = "glmrt's own limit";
  rlimit nproc{};
  if (::getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY)
    lower_to(ceiling, static_cast<std::size_t>(nproc.rlim_cur), "RLIMIT_NPROC (ulimit -u) allows");
  for (const CgroupFolder& folder : cgroup_folders(files.self_cgroup, files.cgroup_mount, "pids"))
    consider_pids_cgroup(ceiling, folder.dir);
  return ceiling;
}

std::size_t requested_http_threads(const ServeOptions& options) {
  if (options.http_threads > 0) return static_cast<std::size_t>(options.http_threads);
  // Every queued request holds a thread while it waits, plus the running
  // ones and room for /health, /metrics and refusals.
  const int running = options.parallel > 0 ? options.parallel : kAutoKvSequences;
  return static_cast<std::size_t>(std::max(options.limits.max_queue, 0)) +
         static_cast<std::size_t>(running) + 3;
}

void check_http_threads(const ServeOptions& options) {
  if (options.http_threads < 0)
    fail("--http-threads must be >= 0 (0 = --max-queue + --parallel + 3), got {}",
         options.http_threads);
  const std::size_t wanted = requested_http_threads(options);
  const ThreadCeiling ceiling = http_thread_ceiling();
  if (wanted <= ceiling.threads) return;
  if (options.http_threads > 0) {
    fail("--http-threads {} is above this machine's ceiling of {} HTTP threads ({})", wanted,
         ceiling.threads, ceiling.reason);
  }
  fail("--max-queue {} needs {} HTTP threads, above this machine's ceiling of {} ({}); lower it",
       options.limits.max_queue, wanted, ceiling.threads, ceiling.reason);
}

}  // namespace glmrt::serve
