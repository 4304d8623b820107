// Writes one planned safetensors file: its header, then every tensor's bytes,
// generated on several threads region by region (alignment gaps zeroed) and
// written with O_DIRECT, so the pace is the drive's and the page cache is left
// to others (buffered writes where the filesystem has no O_DIRECT).
#pragma once

#include <glmrt/base/progress_bar.h>
#include <glmrt/model_maker/model_plan.h>

#include <atomic>
#include <cstdint>
#include <filesystem>

namespace glmrt {

/// Bytes of the file assembled and written per request (a multiple of 4096).
inline constexpr uint64_t kPlannedFileRegionBytes = 8u << 20;

/// Creates `path` (which must not exist), writes `file` into it and syncs it
/// to disk. `written` grows by the bytes written; `bar` is updated from it.
/// The bytes do not depend on `region_bytes`.
void write_planned_file(const std::filesystem::path& path, const PlannedFile& file, uint64_t seed,
                        std::atomic<uint64_t>& written, ProgressBar& bar,
                        uint64_t region_bytes = kPlannedFileRegionBytes);

}  // namespace glmrt
