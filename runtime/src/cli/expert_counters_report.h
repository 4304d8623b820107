// The expert store's counters on lines of their own (run, chat, bench): where
// each lookup was served, what was read, and the pinned set.
#pragma once

#include <glmrt/engine/engine.h>
#include <glmrt/experts/expert_store_stats.h>

#include <cstdio>

namespace glmrt::cli {

/// The lookups and reads `stats` counts, then the pinned set and LRU size.
void print_expert_counters(std::FILE* out, Engine& engine, const ExpertStoreStats& stats);
/// The same with the store's counters since the start.
void print_expert_counters(std::FILE* out, Engine& engine);

}  // namespace glmrt::cli
