// The file io_bench reads: GLM-5-sized routed experts (three int4 matrices
// of 2048 x 6144 plus their f32 scales, 18.9 MB) back to back after a header
// of odd length, as a converted container lays them out, so every expert
// starts at an offset no block size divides and reads are widened.
#pragma once

#include <cstdint>
#include <filesystem>

namespace glmrt::io_bench {

inline constexpr uint64_t kExpertBytes = 3ull * 2048 * 6144 / 2 + (2048 + 2048 + 6144) * 4;
inline constexpr uint64_t kHeaderBytes = 10584;

struct ExpertFile {
  std::filesystem::path path;
  uint64_t size = 0;
  uint64_t experts = 0;
  uint64_t offset(uint64_t expert) const { return kHeaderBytes + expert * kExpertBytes; }
};

/// The file named by $GLMRT_IO_BENCH_FILE (default /tmp/glmrt-io-bench/experts.bin),
/// of $GLMRT_IO_BENCH_GB gigabytes (default 4), written once (pseudo-random
/// bytes) when missing or of another size. Throws when the disk lacks room.
ExpertFile open_expert_file();

/// A second copy of `original` (the same bytes) for the `mirrors` benchmark:
/// $GLMRT_IO_BENCH_MIRROR (a folder, default the original's folder +
/// "-mirror"), copied once when missing or of another size. Put it on
/// another drive to measure two drives; on one drive, give each copy a read
/// cap (GLMRT_IO_BENCH_MIRROR_CAP) to measure the routing.
ExpertFile open_mirror_file(const ExpertFile& original);

}  // namespace glmrt::io_bench
