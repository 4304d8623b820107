// Compares two profiles on any token sequence, without an oracle: both run the
// same ids teacher-forced and every position's next-token distributions are
// compared, as llama.cpp's --kl-divergence does: mean and 99th-percentile
// KL(P || Q) with P the reference profile, how often the top-1 tokens agree,
// and the perplexity of each on the sequence (its ratio Q/P).
#pragma once

#include <glmrt/engine/engine.h>

#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

/// What cache-aware routing (routing.cache_bias) did in one profile's run.
struct CacheBiasCost {
  double bias = 0;            // 0: off, routing exact
  int64_t rows = 0;           // positions it applied in (one decode step each)
  int64_t choices = 0;        // experts those positions chose, every MoE layer
  int64_t substitutions = 0;  // of those, not the exact routing's choice
  bool on() const { return bias > 0; }
};

struct ProfileComparison {
  int64_t positions = 0;  // compared
  double mean_kl = 0, p99_kl = 0, max_kl = 0;
  double same_top1 = 0;                      // fraction
  double ppl_q = 0, ppl_p = 0;               // over positions with a next token
  CacheBiasCost cache_bias_q, cache_bias_p;  // the profiles' cache-aware routing
  double ppl_ratio() const { return ppl_p > 0 ? ppl_q / ppl_p : 0.0; }
};

/// Runs `ids` through `q` and `p` (the reference) in windows of at most
/// `window` tokens (each window a fresh sequence), `chunk` positions per
/// forward call (0: a window at once). A profile with routing.cache_bias on
/// runs one decode step per position instead (where the bias applies), so
/// the comparison measures its cost. Needs at least 2 ids.
ProfileComparison compare_profiles(Engine& q, Engine& p, std::span<const int32_t> ids,
                                   int64_t window, int64_t chunk);

}  // namespace glmrt
