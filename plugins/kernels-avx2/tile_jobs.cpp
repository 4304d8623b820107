#include "tile_jobs.h"

#include <omp.h>

#include <algorithm>
#include <vector>

namespace glmrt::kernels_avx2 {
namespace {

/// Fewer multiply-adds than this run on the calling thread: waking the team
/// costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 16;

}  // namespace

void run_tile_jobs(std::span<const TileJob> jobs, int n_threads) {
  int64_t tiles = 0, work = 0;
  for (const TileJob& job : jobs) {
    tiles += job.tiles;
    work += job.work;
  }
  if (tiles == 0) return;
  const bool parallel = n_threads > 1 && tiles > 1 && work >= kMinParallelWork;
  if (jobs.size() == 1) {
    const TileJob& job = jobs.front();
#pragma omp parallel for schedule(static) num_threads(n_threads) if (parallel)
    for (int64_t t = 0; t < job.tiles; ++t) job.run(job.problem, t);
    return;
  }
  // Products of a group differ in size (an expert's users, a head's keys):
  // tiles are handed out as threads free up, a few at a time.
  std::vector<int64_t> first(jobs.size() + 1, 0);
  for (size_t j = 0; j < jobs.size(); ++j) first[j + 1] = first[j] + jobs[j].tiles;
  const int64_t chunk = std::max<int64_t>(1, tiles / (int64_t{std::max(n_threads, 1)} * 8));
#pragma omp parallel num_threads(n_threads) if (parallel)
  {
    size_t job = 0;
#pragma omp for schedule(dynamic, chunk)
    for (int64_t t = 0; t < tiles; ++t) {
      // Tiles come in ascending order within a chunk; a new chunk may be earlier.
      if (t < first[job]) job = 0;
      while (t >= first[job + 1]) ++job;
      jobs[job].run(jobs[job].problem, t - first[job]);
    }
  }
}

}  // namespace glmrt::kernels_avx2
