// How many HTTP handler threads `glmrt serve` may start on this machine.
// `--http-threads 100000` used to be accepted: it exhausted the process
// table (other shells could not fork) and, in a pids cgroup, never listened.
#pragma once

#include <glmrt/serve/serve_options.h>

#include <cstddef>
#include <filesystem>
#include <string>

namespace glmrt::serve {

/// Far more than requests that can usefully wait for one model.
inline constexpr std::size_t kMaxHttpThreads = 4096;

struct ThreadCeiling {
  std::size_t threads = kMaxHttpThreads;
  std::string reason;  // what set it, for the error message
};

/// Where the process limits are read; tests point these at fake files.
struct ProcessLimitFiles {
  std::filesystem::path self_cgroup = "/proc/self/cgroup";
  std::filesystem::path cgroup_mount = "/sys/fs/cgroup";
};

/// kMaxHttpThreads, or half of what RLIMIT_NPROC or the pids cgroup leaves
/// (the rest stays for the model's own threads and for the machine's other
/// processes), whichever is least.
ThreadCeiling http_thread_ceiling(const ProcessLimitFiles& files = {});

/// The handler threads `options` ask for (0 = max_queue + parallel + 3).
std::size_t requested_http_threads(const ServeOptions& options);

/// Refuses a negative --http-threads, or a count above the ceiling, naming it.
void check_http_threads(const ServeOptions& options);

}  // namespace glmrt::serve
