// glmrt calibrate: runs a model over calibration tokens and collects the
// importance statistics (importance_file.h) of every matrix product,
// including each routed expert's (over the tokens routed to it) and the MTP
// layer's.
#pragma once

#include <glmrt/calibrate/importance_file.h>
#include <glmrt/model/model.h>

#include <cstdint>
#include <functional>
#include <span>

namespace glmrt {

struct CalibrationOptions {
  /// Tokens per window: each window runs from an empty cache (as llama.cpp's
  /// imatrix evaluates chunks of n_ctx), so statistics cover short-context
  /// activations and memory stays bounded.
  int64_t window = 512;
  bool mtp = true;  // also run the MTP layer (when the model has one)
};

/// Runs `tokens` through `model` window by window with `new_cache()` giving
/// each window its cache; the main layers, lm_head and (with options.mtp) the
/// MTP layer, which sees (final-normed h_t, token t+1) for every position of a
/// window but its last. `progress(done, total)` after every window.
ImportanceTable calibrate(Model& model, const std::function<KvCache()>& new_cache,
                          std::span<const int32_t> tokens, const CalibrationOptions& options,
                          const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace glmrt
