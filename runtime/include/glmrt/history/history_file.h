// The usage history's file: a small text file, checksummed, written
// atomically. Form (version 1):
//
//   glmrt-expert-usage 1
//   model <model id>
//   shape <layers> <experts>
//   <layer> <expert> <count>        one line per non-zero count
//   end <checksum of every line above, 16 hex digits>
//
// A file that is missing, truncated, corrupt, of another model or shape, or
// of a later version is reported as such and never partly used.
#pragma once

#include <glmrt/base/input_file.h>
#include <glmrt/base/atomic_file.h>  // write_file_atomically, for the callers
#include <glmrt/history/expert_usage.h>

#include <filesystem>
#include <string>

namespace glmrt {

inline constexpr int kHistoryVersion = 1;

enum class HistoryStatus {
  ok,
  missing,
  unreadable,      // could not be read (permissions, a folder, I/O error)
  invalid,         // truncated or corrupt: not the form above, or a wrong checksum
  foreign,         // another model's or another shape's
  future_version,  // written by a later glmrt: left alone, never overwritten
};

struct HistoryRead {
  HistoryStatus status = HistoryStatus::missing;
  ExpertUsage usage;    // the counts when ok, else an empty grid of the asked shape
  std::string problem;  // what was wrong, for the warning
};

/// The text of a history file.
std::string format_history(const std::string& model_id, const ExpertUsage& usage);
/// Parses a history file's text for `model_id` and the shape layers x experts.
HistoryRead parse_history(std::string_view text, const std::string& model_id, int layers,
                          int experts);
/// What a history of layers x experts may be: no larger than the largest
/// history of that shape glmrt writes.
InputKind history_file_kind(int layers, int experts);
/// Reads and parses `file` (missing, a FIFO or a device, too large: a status, never a throw).
HistoryRead read_history(const std::filesystem::path& file, const std::string& model_id, int layers,
                         int experts);

}  // namespace glmrt
