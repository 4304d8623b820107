// The one line of figures `glmrt chat` prints after an answer by default (the
// full report is under --stats and /stats): how fast the answer came, and the
// expert cache's hit rate when the answer looked experts up beyond the pinned
// set. A figure that does not apply is left out, never shown as 0%.
#pragma once

#include <glmrt/experts/expert_store_stats.h>
#include <glmrt/generate/session.h>

#include <cstddef>
#include <string>

namespace glmrt::cli {

/// E.g. "(24 tokens, 310.5 tokens/s, expert hit rate 87.5%)" for an answer of
/// `answer_tokens` tokens whose work `session` and `experts` count. tokens/s
/// is the decode rate (absent when nothing was decoded); the hit rate is
/// absent when every lookup was served by the pinned set (or there were
/// none), where it would say 100% of nothing read.
std::string answer_summary(size_t answer_tokens, const SessionStats& session,
                           const ExpertStoreStats& experts);

}  // namespace glmrt::cli
