// glmrt calibrate: runs a model over calibration tokens and collects the
// importance statistics (importance_file.h) of every matrix product,
// including each routed expert's (over the tokens routed to it) and the MTP
// layer's.
#pragma once

#include <glmrt/calibrate/importance_file.h>
#include <glmrt/model/model.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>

namespace glmrt {

struct CalibrationOptions {
  /// Tokens per window: each window runs from an empty cache (as llama.cpp's
  /// imatrix evaluates chunks of n_ctx), so statistics cover short-context
  /// activations and memory stays bounded.
  int64_t window = 512;
  bool mtp = true;  // also run the MTP layer (when the model has one)
  /// Second-moment matrices (calibrate_to_file) of inputs at most this wide;
  /// 0 collects none.
  int64_t moments_max_cols = 6144;
  /// Most bytes of second-moment accumulators held at once: layers beyond
  /// it are collected in further passes over the text.
  uint64_t moments_budget_bytes = 2ull << 30;
  /// Where calibrate_to_file may write `out` (base/atomic_file.h): never
  /// into the model folder it reads; `force_out` lets it replace a file that
  /// is no importance file.
  std::filesystem::path model_folder;
  bool force_out = false;
};

struct CalibrationSummary {
  int64_t matrices = 0;  // with diagonal statistics
  int64_t moments = 0;   // second-moment matrices written
  int64_t passes = 0;    // runs over the text
  int64_t tokens = 0;
};

/// Runs `tokens` through `model` window by window with `new_cache()` giving
/// each window its cache; the main layers, lm_head and (with options.mtp) the
/// MTP layer, which sees (final-normed h_t, token t+1) for every position of a
/// window but its last. `progress(done, total)` after every window.
ImportanceTable calibrate(Model& model, const std::function<KvCache()>& new_cache,
                          std::span<const int32_t> tokens, const CalibrationOptions& options,
                          const std::function<void(int64_t, int64_t)>& progress = {});

/// calibrate() and the second moments (second_moment_collector.h) written
/// to `out` (importance_file.h, version 2) pass by pass: the first pass also
/// collects the diagonal statistics; each pass holds at most
/// options.moments_budget_bytes of accumulators and writes them before the
/// next starts. A layer whose routed experts' down_proj matrices alone pass
/// the budget gets none for them (their diagonal statistics remain).
CalibrationSummary calibrate_to_file(Model& model, const std::function<KvCache()>& new_cache,
                                     std::span<const int32_t> tokens,
                                     const CalibrationOptions& options,
                                     const std::filesystem::path& out,
                                     const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace glmrt
