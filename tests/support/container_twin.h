// Containers of a checkpoint, as the seed program and `glmrt convert` lay
// them out: dense matrices and routed experts quantized per row (U8 packed
// values plus `<name>.qs` F32 scales, the seed's rule), the rest as they are.
// A checkpoint snapped to the quantization grid first has a container twin
// that loads bit for bit like the checkpoint quantized on the fly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "host_tensor.h"

namespace glmrt::test {

enum class ContainerLayout {
  /// The seed program's: each expert's three matrices adjacent (the expert
  /// 4096-aligned in the file: headers padded with spaces), a layer's scales
  /// together after its experts; sharded by layer, with an index.
  seed,
  /// glmrt's: each expert's matrices and scales contiguous in one 4096-aligned
  /// extent; one file, header padded with spaces to 4096, odd gaps between
  /// resident tensors.
  aligned_experts,
};

/// glmrt_element_type values for the packed formats (GLMRT_I8, GLMRT_I4, GLMRT_I2).
struct ContainerSpec {
  ContainerLayout layout = ContainerLayout::seed;
  uint32_t dense_type = 2;   // GLMRT_I8
  uint32_t expert_type = 3;  // GLMRT_I4
  bool quantize_experts = true;
  bool quantize_boundary = false;  // embed_tokens / lm_head (and the MTP layer's copies)
  bool stamp = true;               // write __metadata__["quant_formats"]
  int shards = 2;                  // seed layout only
};

/// The packed type `spec` gives tensor `name`, or 0 when it stays as it is
/// (norms, biases, router, indexer weights_proj, and what the spec leaves out).
uint32_t container_type_of(const std::string& name, const ContainerSpec& spec);

/// Rounds every matrix `spec` quantizes onto its grid, in place: per row a
/// power-of-two scale s and values q * s with max |q| = qmax, so quantizing
/// them again (any rule s = max|w| / qmax) gives back exactly q and s.
void snap_to_quantization_grid(TensorList& tensors, const ContainerSpec& spec);

/// Writes config.json and the container of `tensors` into `dir` (created).
void write_container(const std::filesystem::path& dir, const nlohmann::json& config,
                     const TensorList& tensors, const ContainerSpec& spec);

/// Per-row symmetric quantization as the seed program does it: s = max(max|w|
/// / qmax, 1e-8), q = clamp(lrintf(w / s)); returns the packed U8 tensor and
/// its `.qs` scales tensor.
std::pair<HostTensor, HostTensor> quantize_rows(const HostTensor& matrix, uint32_t type);

}  // namespace glmrt::test
