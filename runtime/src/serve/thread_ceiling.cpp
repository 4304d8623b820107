#include <glmrt/base/error.h>
#include <glmrt/serve/thread_ceiling.h>

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>

namespace glmrt::serve {
namespace {

std::optional<std::size_t> read_count(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    std::size_t used = 0;
    const unsigned long long value = std::stoull(word, &used);
    if (used != word.size()) return std::nullopt;
    return static_cast<std::size_t>(value);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void lower_to(ThreadCeiling& ceiling, std::size_t room, const std::string& source) {
  const std::size_t half = room / 2;
  if (half < ceiling.threads) {
    ceiling.threads = half;
    ceiling.reason = "half of the " + std::to_string(room) + " processes " + source;
  }
}

void consider_pids_cgroup(ThreadCeiling& ceiling, const std::filesystem::path& dir) {
  const auto limit = read_count(dir / "pids.max");
  if (!limit) return;
  const std::size_t used = read_count(dir / "pids.current").value_or(0);
  lower_to(ceiling, *limit > used ? *limit - used : 0, (dir / "pids.max").string() + " leaves");
}

}  // namespace

ThreadCeiling http_thread_ceiling(const ProcessLimitFiles& files) {
  ThreadCeiling ceiling;
  ceiling.reason = "glmrt's own limit";
  rlimit nproc{};
  if (::getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY)
    lower_to(ceiling, static_cast<std::size_t>(nproc.rlim_cur), "RLIMIT_NPROC (ulimit -u) allows");
  std::ifstream in(files.self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    // "ID:CONTROLLERS:PATH"; v2 is "0::PATH", v1's pids line names `pids`.
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::filesystem::path relative =
        std::filesystem::path(line.substr(b + 1)).relative_path();
    if (controllers.empty()) {
      for (std::filesystem::path p = relative;; p = p.parent_path()) {
        consider_pids_cgroup(ceiling, files.cgroup_mount / p);
        if (p.empty()) break;
      }
    } else if (("," + controllers + ",").find(",pids,") != std::string::npos) {
      const auto root = files.cgroup_mount / "pids";
      consider_pids_cgroup(ceiling, root / relative);
      if (!relative.empty()) consider_pids_cgroup(ceiling, root);
    }
  }
  return ceiling;
}

std::size_t requested_http_threads(const ServeOptions& options) {
  if (options.http_threads > 0) return static_cast<std::size_t>(options.http_threads);
  // Every queued request holds a thread while it waits, plus the running one
  // and room for /health, /metrics and refusals.
  return static_cast<std::size_t>(std::max(options.limits.max_queue, 0)) + 4;
}

void check_http_threads(const ServeOptions& options) {
  if (options.http_threads < 0)
    fail("--http-threads must be >= 0 (0 = --max-queue + 4), got {}", options.http_threads);
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
