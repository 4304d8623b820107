// Resident weights packed for the kernels plugin at load (ABI 1.7): each
// matrix the plugin offers a layout for is rewritten in place, so the
// products of a decode step run on rows laid out for its kernels.
#pragma once

#include <glmrt/model/model_weights.h>
#include <glmrt/weights/kernels_backend.h>

#include <cstdint>

namespace glmrt {

struct PackedWeightsSummary {
  int matrices = 0;
  uint64_t bytes = 0;
  double seconds = 0;
};

/// Packs every matrix of `weights` the plugin offers a layout for, except
/// those the core reads itself or slices by head: the embeddings (a token's
/// row is looked up) and kv_b's two halves (per-head views, and rows the
/// reconstructed attention form reads back).
PackedWeightsSummary pack_resident_weights(ModelWeights& weights, const KernelsBackend& kernels);

}  // namespace glmrt
