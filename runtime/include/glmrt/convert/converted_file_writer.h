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
#include <glmrt/weights/gptq_quantizer.h>

#include <filesystem>
#include <functional>
#include <span>

namespace glmrt {

struct ConvertedFileChecksums {
  uint64_t file = 0;    // XXH3-64 of the bytes written
  uint64_t source = 0;  // of the source bytes read (see source_checksum.h)
};

/// How matrices are rounded, by tensor name.
struct MatrixRounding {
  /// Optional [cols] weights for the per-group scale search (empty: none).
  std::function<std::span<const float>(const std::string&)> importance;
  /// The error-feedback factor of a matrix's input (nullptr: rounded alone);
  /// its working set (one [cols, cols] factor, the block's rows in f32) is
  /// what a matrix adds to the memory above.
  std::function<const GptqFactor*(const std::string&)> gptq;
  GptqScales gptq_scales = GptqScales::during;
};

/// `consumed` is called with the number of source bytes each step used up.
ConvertedFileChecksums write_converted_file(const std::filesystem::path& path,
                                            const PlannedFile& file,
                                            std::span<const ConvertedPart> parts,
                                            const TensorDirectory& dir,
                                            std::array<int64_t, 2> fp8_block,
                                            const std::function<void(uint64_t)>& consumed,
                                            const MatrixRounding& rounding = {});

}  // namespace glmrt
