// A product cut into tiles of weight rows that run in any order on any
// thread: how one call — a single matmul or a grouped list — is spread over
// the host's threads in one OpenMP region.
#pragma once

#include <cstdint>
#include <span>

namespace glmrt::kernels_avx2 {

struct TileJob {
  /// Runs tiles [first, end) in order: one call per thread's share (or per
  /// handed-out chunk), so a tile of one weight row costs no call of its own.
  using Run = void (*)(const void* problem, int64_t first, int64_t end);
  Run run = nullptr;
  const void* problem = nullptr;  // the IntMatmul or FloatMatmul `run` takes
  int64_t tiles = 0;
  int64_t work = 0;  // multiply-adds, to decide whether waking threads pays
};

/// Runs every tile of every job over at most `n_threads` threads (the
/// caller's alone when the work is too small to share).
void run_tile_jobs(std::span<const TileJob> jobs, int n_threads);

}  // namespace glmrt::kernels_avx2
