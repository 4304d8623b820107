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

struct ProfileComparison {
  int64_t positions = 0;  // compared
  double mean_kl = 0, p99_kl = 0, max_kl = 0;
  double same_top1 = 0;         // fraction
  double ppl_q = 0, ppl_p = 0;  // over positions with a next token
  double ppl_ratio() const { return ppl_p > 0 ? ppl_q / ppl_p : 0.0; }
};

/// Runs `ids` through `q` and `p` (the reference) in windows of at most
/// `window` tokens (each window a fresh sequence), `chunk` positions per
/// forward call (0: a window at once). Needs at least 2 ids.
ProfileComparison compare_profiles(Engine& q, Engine& p, std::span<const int32_t> ids,
                                   int64_t window, int64_t chunk);

}  // namespace glmrt
