// Reads named tensors of a model directory into Matrices and vectors, checking
// each one's presence and shape against what the config implies.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/model_files/tensor_usage.h>
#include <glmrt/weights/matrix.h>

#include <string>
#include <vector>

namespace glmrt {

class TensorLoader {
 public:
  /// Every tensor read is marked in `usage` when given. Values read are
  /// checked to be finite (TensorDirectory::read_f32), and so are values
  /// after conversion to bf16.
  TensorLoader(const TensorDirectory& tensors, MemoryBudget* budget, TensorUsage* usage = nullptr)
      : tensors_(tensors), budget_(budget), usage_(usage) {}

  /// W[rows, cols] at `bits` precision. A tensor stored pre-quantized (U8
  /// packed values plus an F32 `<name>.qs` of per-row scales, format told by
  /// the byte count) is adopted as it is.
  Matrix matrix(const std::string& name, int64_t rows, int64_t cols, WeightBits bits,
                const std::string& category) const;
  /// A 1-D tensor of exactly n values, as f32.
  std::vector<float> vector(const std::string& name, int64_t n) const;
  /// A tensor's f32 values after checking its shape is [rows, cols].
  std::vector<float> f32(const std::string& name, int64_t rows, int64_t cols) const;

  bool contains(const std::string& name) const { return tensors_.contains(name); }
  /// Counts `name` as used although it is not read (a tensor the model
  /// deliberately ignores and has already warned about).
  void count_as_used(const std::string& name) const {
    if (usage_) usage_->mark(name);
  }
  const TensorDirectory& directory() const { return tensors_; }
  MemoryBudget* budget() const { return budget_; }

  /// Element type of a pre-quantized tensor from its packed byte count, or -1.
  static int packed_type_for(uint64_t bytes, int64_t rows, int64_t cols);

 private:
  const TensorInfo& checked(const std::string& name, std::vector<int64_t> shape) const;
  const TensorDirectory& tensors_;
  MemoryBudget* budget_;
  TensorUsage* usage_;
};

}  // namespace glmrt
