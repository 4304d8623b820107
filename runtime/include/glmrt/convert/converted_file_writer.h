// Writes one planned output file of a conversion front to back: its header,
// then each tensor converted block of rows by block of rows (rows decoded and
// encoded in parallel on the OpenMP threads) while the next block is read and
// the previous one goes to the drive, and returns the file's XXH3-64 and the
// checksum of the source bytes it was made of (source_checksum.h). Memory:
// two 16 MB blocks of source bytes, a row of f32 per thread, the writer's two
// buffers and the current matrix's scales.
#pragma once

#include <glmrt/convert/conversion_plan.h>
#include <glmrt/model_files/safetensors.h>

#include <filesystem>
#include <functional>
#include <span>

namespace glmrt {

struct ConvertedFileChecksums {
  uint64_t file = 0;    // XXH3-64 of the bytes written
  uint64_t source = 0;  // of the source bytes read (see source_checksum.h)
};

/// `consumed` is called with the number of source bytes each step used up.
/// `importance` gives, by tensor name, optional [cols] weights for the
/// per-group scale search (empty: none).
ConvertedFileChecksums write_converted_file(
    const std::filesystem::path& path, const PlannedFile& file,
    std::span<const ConvertedPart> parts, const TensorDirectory& dir,
    std::array<int64_t, 2> fp8_block, const std::function<void(uint64_t)>& consumed,
    const std::function<std::span<const float>(const std::string&)>& importance = {});

}  // namespace glmrt
