// What the machine can do at best, measured by `glmrt bench --limits` beside
// each run: the raw drive read speed (the bench/io baseline, on the model's
// own drive) and the memory read speed. Divided by the bytes a decode step
// misses or touches, they give the drive and DRAM limits of decode.
#pragma once

#include <cstdint>
#include <filesystem>

namespace glmrt::cli {

/// Sequential 64 MiB O_DIRECT reads (smaller for a smaller file) into a
/// 2 MiB-aligned huge-page buffer from the largest file in `model_dir`, at
/// most `max_bytes` of it: the most the drive gives, in GB/s. O_DIRECT skips
/// the page cache, so what it holds neither speeds the reads up nor is
/// dropped. Throws naming the file when it cannot be read with O_DIRECT.
double measure_drive_read_gb_per_second(const std::filesystem::path& model_dir, uint64_t max_bytes);

/// `threads` threads each streaming a disjoint slice of a `bytes` buffer
/// (far larger than the last-level cache, faulted in first): the median of
/// three passes, in GB/s. Throws when the buffer cannot be mapped.
double measure_memory_read_gb_per_second(uint64_t bytes, int threads);

}  // namespace glmrt::cli
