// What `glmrt run` and `glmrt chat` print on stderr after an answer: speed,
// expert cache hit rate and memory, so a profile's effect is visible at once.
#pragma once

#include <glmrt/draft/draft_stats.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/session.h>

#include <cstdio>

namespace glmrt::cli {

/// Prefill and decode tokens/s of `stats`, the expert cache's hit rate so far,
/// peak RSS and the budget's peak.
void print_generation_report(std::FILE* out, const SessionStats& stats, Engine& engine);

/// Speculative decoding's lines (describe_draft_stats), each on its own line
/// after the generation report.
void print_draft_report(std::FILE* out, const DraftStats& stats);

/// How long opening the model took and how fast its resident weights were read.
void print_load_report(std::FILE* out, const Engine& engine);

}  // namespace glmrt::cli
