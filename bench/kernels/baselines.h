// What the machine can do at best, measured with the benchmark's thread count:
// the ceilings the kernels are judged against.
#pragma once

#include <cstddef>
#include <cstdint>

namespace glmrt::bench {

/// Reads `bytes` (a buffer far larger than the last-level cache) once with
/// `threads` threads streaming disjoint slices; returns a checksum so the
/// reads cannot be optimised away.
uint64_t stream_read(const std::byte* data, size_t bytes, int threads);

/// Each of `threads` threads runs int8 x int8 dot products over 4 KiB vectors
/// that stay in L1, `repeats` times; returns multiply-adds done.
int64_t int8_dot_in_l1(int threads, int64_t repeats);

}  // namespace glmrt::bench
