// Loads the resident tensors of a model directory: each matrix call checks the
// tensor against the shape the config implies and allocates its memory at
// once; finish() then reads every queued tensor on parallel I/O threads,
// straight into place when the file holds it at the precision asked for
// (a container's pre-quantized tensors are adopted without requantizing), and
// converts the others block of rows by block of rows on the thread that read
// them, as they arrive, with a progress bar on a terminal.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/model_files/tensor_usage.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>
#include <glmrt/weights/stored_matrix.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace glmrt {

/// What finish() did.
struct LoadSummary {
  uint64_t bytes = 0;  // read from the files
  double seconds = 0;
  int tensors_read_in_place = 0;
  int tensors_converted = 0;
  /// Pre-quantized tensors converted to another precision: "name (int8 -> bf16)".
  std::vector<std::string> requantized;
  /// Matrices the kernels plugin packed in place after the read (ABI 1.7).
  int matrices_packed = 0;
  uint64_t packed_bytes = 0;
  double packing_seconds = 0;
};

class TensorLoader {
 public:
  enum class Mode {
    load,  // read and convert what is asked for
    /// Check what is asked for against the files as loading does (presence,
    /// shape, dtype, format stamp, scales) and mark it used, but allocate
    /// and read nothing: matrix() returns an empty Matrix, vector() an empty
    /// vector and finish() does nothing (`glmrt verify`, `glmrt convert`).
    check,
  };

  /// Every tensor read is marked in `usage` when given. Float values read are
  /// checked to be finite, and so are values after conversion to bf16, and
  /// the scales of pre-quantized tensors.
  TensorLoader(const TensorDirectory& tensors, MemoryBudget* budget, TensorUsage* usage = nullptr,
               Mode mode = Mode::load);

  /// W[rows, cols] at `precision`. The Matrix is allocated now and filled by
  /// finish(); it must not be used before. A tensor the file holds
  /// pre-quantized with the same bits is adopted as it is, with its own
  /// scales (per row or per group: the container's group size wins over the
  /// profile's, requantizing would only lose precision); so is one
  /// pre-quantized with the bits of `also_adopt`.
  Matrix matrix(const std::string& name, int64_t rows, int64_t cols, WeightPrecision precision,
                const std::string& category,
                std::optional<WeightPrecision> also_adopt = std::nullopt);

  /// Called with consecutive rows of a matrix as stored, the first being
  /// `first_row`; calls for different blocks run concurrently on I/O threads.
  using RowsUse = std::function<void(const SourceMatrix& rows, int64_t first_row)>;
  /// Reads `name`, a rows x cols matrix in whatever form the file holds it,
  /// during finish(), in blocks of a multiple of `row_granularity` rows each
  /// handed to `use` (for tensors the model rearranges, such as kv_b_proj).
  void read_matrix(const std::string& name, int64_t rows, int64_t cols, int64_t row_granularity,
                   RowsUse use);
  /// A 1-D tensor of exactly n values, as f32, read now (norms and biases are small).
  std::vector<float> vector(const std::string& name, int64_t n) const;

  /// Reads and converts everything queued by matrix() and read_matrix().
  /// Throws glmrt::Error naming the file and tensor when a read fails.
  const LoadSummary& finish();
  const LoadSummary& summary() const { return summary_; }

  bool contains(const std::string& name) const { return tensors_.contains(name); }
  /// Counts `name` as used although it is not read (a tensor the model
  /// deliberately ignores and has already warned about).
  void count_as_used(const std::string& name) const {
    if (usage_) usage_->mark(name);
  }
  const TensorDirectory& directory() const { return tensors_; }
  MemoryBudget* budget() const { return budget_; }
  bool checks_only() const { return mode_ == Mode::check; }

 private:
  struct Pending {
    StoredMatrix stored;
    MatrixStorage in_place;  // data != nullptr: the bytes are read straight into it
    RowsUse use;             // otherwise: called with blocks of rows as they arrive
    int64_t row_granularity = 1;
    bool direct = false;  // in_place.data was allocated for an O_DIRECT read
  };

  void mark_used(const StoredMatrix& stored) const;

  const TensorDirectory& tensors_;
  MemoryBudget* budget_;
  TensorUsage* usage_;
  Mode mode_;
  std::vector<Pending> pending_;
  LoadSummary summary_;
};

}  // namespace glmrt
