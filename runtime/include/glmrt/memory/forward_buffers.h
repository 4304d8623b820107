// What one forward call allocates besides weights, caches and expert slots:
// the buffers the model, the MoE block and the session hold while S new
// positions run against a context of T. Every buffer that grows with S or T
// is counted here (see forward_buffers.cpp for the list and where each one
// lives), so the memory plan can bound a whole-prompt prefill before loading
// and choose a prefill chunk that fits the budget.
#pragma once

#include <glmrt/model_files/model_config.h>

#include <cstdint>

namespace glmrt {

struct ForwardShape {
  int64_t positions = 1;  // S: positions of one forward call
  int64_t context = 1;    // T: keys a query may see (max_context)
  int threads = 1;        // threads the kernels plugin runs on
  int draft_tokens = 0;   // drafts verified per step (their logits rows)
  bool mtp_rows = false;  // the session keeps MTP pairs (a drafter runs the MTP layer)
  int sequences = 1;      // decoded together (serve --parallel): each step's logits rows
};

struct ForwardBufferBytes {
  /// The MoE block's buffers (MoeScratch keeps them at the largest call:
  /// router logits, per-user lists, each user's expert output, one grouped call's
  /// gathered rows, the shared expert, the next layer's prediction).
  uint64_t moe_block = 0;
  /// Everything else at the call's peak: the hidden, normed and delta rows,
  /// the larger of attention (queries, indexer scores, either MLA form's
  /// buffers) and the dense MLP, the absorbed form's kept scratch, DSA
  /// selections, and the session's rows after the call (MTP pairs).
  uint64_t layers = 0;
  /// Logits: one row per verified position (and the sampler's copy), or a
  /// scoring block of rows, whichever is larger.
  uint64_t logits = 0;
};

/// Rows of logits `glmrt score` (and /v1/completions with echo) computes at
/// once: [rows, vocab] floats stay near this many bytes.
inline constexpr int64_t kScoreLogitBlockBytes = int64_t{64} << 20;

/// An upper bound of the bytes one forward call of `shape` allocates.
ForwardBufferBytes forward_buffer_bytes(const ModelConfig& config, const ForwardShape& shape);

}  // namespace glmrt
