// What `glmrt run` and `glmrt chat` print on stderr after an answer: speed,
// expert cache hit rate and memory, so a profile's effect is visible at once.
// Figures that do not apply (a hit rate of no lookups, the accuracy of no
// prediction) are left out rather than printed as 0%.
#pragma once

#include <glmrt/draft/draft_stats.h>
#include <glmrt/engine/engine.h>
#include <glmrt/experts/expert_store_stats.h>
#include <glmrt/generate/session.h>

#include <cstdio>

namespace glmrt::cli {

/// Prefill and decode tokens/s of `stats`, the expert figures of `experts`
/// (the work they count), peak RSS and the budget's peak. The first line,
/// `prefill: ...; decode: ...`, keeps its form: scripts parse it.
void print_generation_report(std::FILE* out, const SessionStats& stats,
                             const ExpertStoreStats& experts, Engine& engine);
/// The same with the expert store's counters since the start (`glmrt run`).
void print_generation_report(std::FILE* out, const SessionStats& stats, Engine& engine);

/// Speculative decoding's lines (describe_draft_stats), each on its own line
/// after the generation report.
void print_draft_report(std::FILE* out, const DraftStats& stats);

/// How long opening the model took and how fast its resident weights were read.
void print_load_report(std::FILE* out, const Engine& engine);

}  // namespace glmrt::cli
