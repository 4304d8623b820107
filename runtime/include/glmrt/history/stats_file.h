// The seed program's STATS files: one line `layer expert count` per used
// expert (the MTP layer is row num_hidden_layers), nothing else.
#pragma once

#include <glmrt/base/atomic_file.h>
#include <glmrt/history/expert_usage.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace glmrt {

/// Parses a STATS file's text into a layers x experts grid. Blank lines are
/// skipped; anything else malformed or out of range is a glmrt::Error naming
/// `source` and the line.
ExpertUsage parse_stats(std::string_view text, int layers, int experts, const std::string& source);
ExpertUsage read_stats_file(const std::filesystem::path& file, int layers, int experts);

/// The STATS text of `usage` (non-zero counts, by layer then expert).
std::string format_stats(const ExpertUsage& usage);

/// What --export writes: an existing file is an earlier export when its
/// first 64 KiB are lines of three numbers (or blank).
OutputKind stats_output_kind();

}  // namespace glmrt
