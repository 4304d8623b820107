// A routing trace: every MoE step of a run, in order, with each position's
// chosen experts (`glmrt run --record-routing FILE`), for replaying through
// cache policies (`glmrt stats --replay FILE`). Text, one step a line:
//
//   glmrt-routing-trace 2
//   model <model id>
//   shape <layers> <experts> <experts per token>
//   <layer> <positions> <id> ... (positions x experts-per-token ids)
//   end <number of step lines>
//
// The end line makes a cut trace (a killed run, a full disk) tell itself
// apart from a whole one. Version 1 traces (no end line) are still read.
#pragma once

#include <glmrt/base/atomic_file.h>
#include <glmrt/history/expert_usage.h>
#include <glmrt/model/routing_observer.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace glmrt {

inline constexpr int kRoutingTraceVersion = 2;

/// The largest trace shape read: beyond any MoE checkpoint, and small enough
/// that the replay's per-cell tables (a few tens of bytes a cell) stay small.
inline constexpr int kMaxTraceLayers = 1024;
inline constexpr int kMaxTraceExperts = 65536;
inline constexpr int64_t kMaxTraceCells = int64_t{1} << 22;
/// A trace's largest size; a GLM-5 token takes ~3 KB (75 MoE layers of 8 ids),
/// so this holds ~90 000 decoded tokens.
inline constexpr uint64_t kMaxTraceBytes = uint64_t{256} << 20;

struct RoutingShape {
  int layers = 0, experts = 0, top_k = 0;
  bool operator==(const RoutingShape&) const = default;
};

struct RoutingStep {
  int layer = 0;
  int64_t positions = 0;
  std::vector<int32_t> experts;  // positions x top_k, position-major
};

struct RoutingTrace {
  std::string model_id;
  int layers = 0, experts = 0, top_k = 0;
  std::vector<RoutingStep> steps;

  RoutingShape shape() const { return {layers, experts, top_k}; }
  /// Selection counts over the whole trace.
  ExpertUsage usage() const;
};

/// Reads a trace; a malformed, cut or oversized one is a glmrt::Error naming
/// the file and line. With `expected`, a trace of another shape is refused
/// before anything of its size is allocated.
/// What a trace writer writes: an existing file is an earlier trace when it
/// starts with `glmrt-routing-trace `.
OutputKind routing_trace_output_kind();

RoutingTrace read_routing_trace(const std::filesystem::path& file,
                                const std::optional<RoutingShape>& expected = std::nullopt);

/// Writes steps to a trace as they happen, into a temporary file that close()
/// renames to `file` only when every write succeeded.
class RoutingTraceWriter : public RoutingObserver {
 public:
  /// Starts the temporary file and writes the header. Refuses (glmrt::Error)
  /// what the output rule refuses (base/atomic_file.h): a `file` inside
  /// `model_dir` (when given), a device, and an existing `file` that is not a
  /// routing trace unless `force`.
  RoutingTraceWriter(const std::filesystem::path& file, const std::string& model_id,
                     RoutingShape shape, const std::filesystem::path& model_dir = {},
                     bool force = false);
  RoutingTraceWriter(const RoutingTraceWriter&) = delete;
  RoutingTraceWriter& operator=(const RoutingTraceWriter&) = delete;
  /// Without close(), nothing is written to `file` (the run did not finish).
  ~RoutingTraceWriter() override;

  /// Never throws (it runs inside the forward pass): a failed write is kept
  /// for close() to report, and later steps are skipped.
  void on_routed(int layer, int64_t positions, std::span<const int32_t> experts) override;
  /// Writes the end line and renames the trace into place; throws naming the
  /// file and the system's reason when any write failed (the file is then
  /// left as it was).
  void close();

 private:
  std::unique_ptr<AtomicFile> out_;
  std::string failure_;  // the first write error
  int64_t steps_ = 0;
};

}  // namespace glmrt
