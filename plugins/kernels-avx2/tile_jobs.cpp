#include "tile_jobs.h"

#include <parallel_work.h>

#include <omp.h>

#include <algorithm>
#include <vector>

namespace glmrt::kernels_avx2 {

void run_tile_jobs(std::span<const TileJob> jobs, int n_threads) {
  int64_t tiles = 0, work = 0;
  for (const TileJob& job : jobs) {
    tiles += job.tiles;
    work += job.work;
  }
  if (tiles == 0) return;
  if (n_threads <= 1 || tiles == 1 || work < plugin_support::kMinParallelMultiplyAdds) {
    for (const TileJob& job : jobs)
      if (job.tiles > 0) job.run(job.problem, 0, job.tiles);
    return;
  }
  if (jobs.size() == 1) {
    const TileJob& job = jobs.front();
#pragma omp parallel num_threads(n_threads)
    {
      // The static split of `omp for`: each thread one contiguous share.
      const int64_t team = omp_get_num_threads(), me = omp_get_thread_num();
      const int64_t first = job.tiles * me / team, end = job.tiles * (me + 1) / team;
      if (first < end) job.run(job.problem, first, end);
    }
    return;
  }
  // Products of a group differ in size (an expert's users, a head's keys):
  // chunks of tiles are handed out as threads free up, a few at a time; a
  // chunk that spans products runs as one piece per product.
  std::vector<int64_t> start(jobs.size() + 1, 0);
  for (size_t j = 0; j < jobs.size(); ++j) start[j + 1] = start[j] + jobs[j].tiles;
  const int64_t chunk = std::max<int64_t>(1, tiles / (int64_t{n_threads} * 8));
  const int64_t chunks = (tiles + chunk - 1) / chunk;
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t first = c * chunk, end = std::min(tiles, first + chunk);
    size_t job = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), first) -
                                     start.begin() - 1);
    for (int64_t t = first; t < end; ++job) {
      const int64_t stop = std::min(end, start[job + 1]);
      if (stop > t) jobs[job].run(jobs[job].problem, t - start[job], stop - start[job]);
      t = std::max(t, stop);
    }
  }
}

}  // namespace glmrt::kernels_avx2
