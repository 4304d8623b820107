// A routing trace: every MoE step of a run, in order, with each position's
// chosen experts (`glmrt run --record-routing FILE`), for replaying through
// cache policies (`glmrt stats --replay FILE`). Text, one step a line:
//
//   glmrt-routing-trace 1
//   model <model id>
//   shape <layers> <experts> <experts per token>
//   <layer> <positions> <id> ... (positions x experts-per-token ids)
#pragma once

#include <glmrt/history/expert_usage.h>
#include <glmrt/history/routing_observer.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt {

struct RoutingStep {
  int layer = 0;
  int64_t positions = 0;
  std::vector<int32_t> experts;  // positions x top_k, position-major
};

struct RoutingTrace {
  std::string model_id;
  int layers = 0, experts = 0, top_k = 0;
  std::vector<RoutingStep> steps;

  /// Selection counts over the whole trace.
  ExpertUsage usage() const;
};

/// Reads a trace; a malformed one is a glmrt::Error naming the file and line.
RoutingTrace read_routing_trace(const std::filesystem::path& file);

/// Writes steps to a trace file as they happen (flushed at each step's end,
/// so a trace of an interrupted run holds every finished step).
class RoutingTraceWriter : public RoutingObserver {
 public:
  /// Creates `file` (replacing it) and writes the header; throws naming it.
  RoutingTraceWriter(const std::filesystem::path& file, const std::string& model_id, int layers,
                     int experts, int top_k);
  RoutingTraceWriter(const RoutingTraceWriter&) = delete;
  RoutingTraceWriter& operator=(const RoutingTraceWriter&) = delete;
  ~RoutingTraceWriter() override;

  void on_routed(int layer, int64_t positions, std::span<const int32_t> experts) override;
  /// Flushes and closes; throws naming the file when a write failed.
  void close();

 private:
  std::filesystem::path file_;
  std::FILE* out_ = nullptr;
  bool failed_ = false;
};

}  // namespace glmrt
