// Activation statistics for importance-weighted quantization: per weight
// matrix, the mean of x^2 over the calibration tokens for each input channel
// (the statistic llama.cpp's imatrix collects). `glmrt calibrate` writes
// them, `glmrt convert --importance` weights the per-group scale search with
// them. The file is a safetensors file (docs/convert.md "Importance file"):
// one F32 vector [cols] per matrix, named after the weight it weights, and in
// __metadata__ "format": "glmrt-importance-1", "tokens" and, per tensor,
// "rows.<name>" (how many input rows its mean is over).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace glmrt {

struct ImportanceTable {
  struct Entry {
    std::vector<float> mean_square;  // [cols]
    int64_t rows = 0;                // input rows averaged
  };
  std::map<std::string, Entry> entries;  // by weight name
  int64_t tokens = 0;                    // calibration tokens run

  /// The statistics of `weight`, empty when it has none (an expert no token
  /// was routed to, a tensor no product reads).
  std::span<const float> find(const std::string& weight) const;
};

inline constexpr const char* kImportanceFormat = "glmrt-importance-1";

/// Writes `table` to `file` atomically (a temporary beside it, renamed).
void write_importance_file(const std::filesystem::path& file, const ImportanceTable& table);

/// Reads and checks a file written by write_importance_file; anything else
/// (not safetensors, another format tag, a tensor that is not a finite,
/// non-negative F32 vector, offsets outside the file) is refused naming the
/// file and the tensor.
ImportanceTable read_importance_file(const std::filesystem::path& file);

}  // namespace glmrt
