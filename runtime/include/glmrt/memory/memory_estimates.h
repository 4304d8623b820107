// The sizes the memory plan adds up, each worked out from the profile, the
// config and the safetensors headers alone (no tensor data is read).
#pragma once

#include <glmrt/experts/expert_layout.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/profile/profile.h>

#include <glmrt/plugin/weight_format.h>

#include <cstdint>
#include <string>
#include <vector>

namespace glmrt {

/// Bytes a [rows, cols] matrix takes stored as `bits` (packed rows, plus one
/// f32 scale per row for the integer formats).
uint64_t stored_matrix_bytes(int64_t rows, int64_t cols, WeightPrecision precision);

/// Whether the checkpoint carries the MTP layer the model would load.
bool checkpoint_has_mtp(const ModelConfig& config, const TensorDirectory& tensors);

/// One resident tensor as the loader stores it: a matrix [rows, cols] at a
/// precision, or a vector (norm, bias) of `rows` f32 values.
struct ResidentMatrix {
  std::string name;
  int64_t rows = 0, cols = 0;
  WeightPrecision precision;
  bool vector = false;
  /// Under precision `stored`: the element type its file's bytes are kept in.
  int kept_type = -1;
  uint32_t element_type() const;
  /// Bytes it takes in memory (packed rows and their scales, or the f32 vector).
  uint64_t bytes() const;
};
/// Every resident tensor (everything but routed experts), as load_model_weights
/// stores it: matrices at `precision.dense`, embed_tokens/lm_head at the
/// boundary precision (or as pre-quantized), the router and the indexer's head
/// weights in f32, a tied lm_head as a second matrix.
std::vector<ResidentMatrix> resident_matrices(const Profile& profile, const ModelConfig& config,
                                              const TensorDirectory& tensors);

/// A weight format the model will hand the kernels plugin, and one tensor
/// that uses it (for the error that names it).
struct UsedWeightFormat {
  uint32_t element_type = GLMRT_F32;
  uint32_t group_size = 0;
  std::string example;
  glmrt_weight_format format() const;
  std::string name() const;  // "int4-g64"
};
/// Every weight format a run of this profile multiplies with: the resident
/// matrices, the routed experts (as stored, or at precision.experts), and the
/// f32 blocks the reconstructed attention widens on the fly.
std::vector<UsedWeightFormat> weight_formats_in_use(
    const Profile& profile, const ModelConfig& config, const TensorDirectory& tensors,
    const std::vector<std::vector<ExpertLayout>>& layouts);

/// The resident weights (everything but routed experts) at the profile's
/// precision, as the loader stores them: matrices at `precision.dense`,
/// embed_tokens/lm_head at the boundary precision (or as pre-quantized),
/// norms and biases as f32.
uint64_t resident_weight_bytes(const Profile& profile, const ModelConfig& config,
                               const TensorDirectory& tensors);

/// The KV cache of one sequence at max_context (every layer incl. MTP; the
/// indexer keys of layers with a full indexer).
uint64_t kv_cache_bytes(const Profile& profile, const ModelConfig& config);

/// One routed expert in memory (converted to the profile's precision, or as
/// pre-quantized) and as read from the files; the largest over all layers.
struct ExpertSize {
  uint64_t in_memory = 0;
  uint64_t read = 0;
};
ExpertSize largest_expert(const std::vector<std::vector<ExpertLayout>>& layouts,
                          WeightPrecision precision);

}  // namespace glmrt
