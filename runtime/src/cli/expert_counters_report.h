// The expert store's counters on lines of their own (run, chat, bench): where
// each lookup was served, what was read, and the pinned set.
#pragma once

#include <glmrt/engine/engine.h>

#include <cstdio>

namespace glmrt::cli {

void print_expert_counters(std::FILE* out, Engine& engine);

}  // namespace glmrt::cli
