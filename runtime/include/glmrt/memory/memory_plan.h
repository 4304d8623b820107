// Where a run's memory goes, worked out from the profile, config.json and the
// safetensors headers before any tensor is read: each part the run needs, the
// budget they must fit (memory.budget, or `auto`: a share of the memory
// available now), and the expert memory (pinned set, LRU) sized from what is
// left when the profile says `auto`. A budget below what the fixed parts need
// is refused before loading, with every part's figure.
#pragma once

#include <glmrt/experts/expert_layout.h>
#include <glmrt/memory/available_memory.h>
#include <glmrt/memory/run_settings.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/profile/profile.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace glmrt {

struct MemoryPart {
  std::string name;
  uint64_t bytes = 0;
  std::string detail;  // how it was worked out
  bool needed = true;  // part of the minimum (false: sized from what is left)
};

struct MemoryPlan {
  uint64_t budget = 0;        // 0 = no budget
  std::string budget_origin;  // "memory.budget" or how `auto` was measured
  std::vector<MemoryPart> parts;

  uint64_t expert_bytes = 0;       // one routed expert in memory at the profile's precision
  uint64_t expert_read_bytes = 0;  // one routed expert as read from the files
  int moe_layers = 0;              // expert-store rows with routed experts (MTP included)
  int cache_per_layer = 0;         // LRU experts per MoE layer (auto resolved)
  uint64_t pinned_bytes = 0;       // pinned set (auto resolved; at most what the history ranks)
  bool cache_auto = false, pinned_auto = false;
  /// Positions a prefill call takes at most: memory.prefill_chunk, else the
  /// whole context, or with a budget the largest chunk that fits it.
  int64_t prefill_chunk = 0;
  bool prefill_chunk_from_budget =
      false;                // memory.prefill_chunk 0, but the whole prompt does not fit
  int forward_threads = 1;  // threads the buffers were counted for
  /// KV caches of max_context counted: profile.kv_sequences, auto resolved.
  int kv_sequences = 1;

  /// Bytes of the parts the run needs whatever the expert memory.
  uint64_t minimum() const;
  uint64_t total() const;
  const MemoryPart* part(std::string_view name) const;
  /// One line per part: name, size, detail; then total, minimum and budget.
  std::string table() const;
};

/// Share of the expert memory `memory.pinned: auto` gives the pinned set
/// (measured by replaying skewed routing traces: see docs/profiles.md).
inline constexpr double kAutoPinnedShare = 0.75;

/// What one process of an expert-parallel run (mpirun, docs/distributed.md)
/// holds: rank 0 the whole model but only its shard of the routed experts,
/// an expert rank its shard alone.
struct RankShare {
  int rank = 0;
  bool holds_model = true;    // dense weights, KV cache, logits: rank 0 only
  int experts_per_layer = 0;  // the most routed experts of one layer this rank runs
  int64_t experts_owned = 0;  // routed experts of every layer this rank runs
};

/// The share of `layouts`' routed experts (per layer, per expert; empty rows
/// are dense layers) that `runs_expert` gives rank `rank`.
RankShare rank_share_of(int rank, bool holds_model,
                        const std::vector<std::vector<ExpertLayout>>& layouts,
                        const std::function<bool(int layer, int32_t expert)>& runs_expert);

struct MemoryPlanInputs {
  uint64_t process_overhead = 0;  // resident bytes of the process before loading (measured)
  AvailableMemory available;      // for `memory.budget: auto`
  /// Experts the usage history ranks (the most `memory.pinned: auto` can
  /// pin); nullopt = no limit (the history is not known).
  std::optional<uint64_t> pinnable_experts;
  /// One expert slot as the expert store plans it for the io plugin in use
  /// (the largest over all layers); nullopt = estimated from the headers.
  std::optional<uint64_t> slot_bytes = std::nullopt;
  /// The expert layouts the engine planned (nullptr: planned here from the headers).
  const std::vector<std::vector<ExpertLayout>>* layouts = nullptr;
  /// This process's part of an expert-parallel run (nullopt: one process
  /// runs the whole model): an expert rank plans no dense weights, KV cache
  /// or logits, and no rank plans cache or pinned room for more experts than
  /// its shard holds.
  std::optional<RankShare> rank_share = std::nullopt;
};

/// The smallest prefill chunk `memory.prefill_chunk: 0` falls back to under a
/// tight budget: one pass over the weights for this many positions.
inline constexpr int64_t kSmallestAutoPrefillChunk = 256;

/// Works the plan out for the run `settings` describes (resolved from
/// `profile` and `config`); throws glmrt::Error (naming the profile, every
/// part, what is needed and what is given) when the budget is below the minimum.
MemoryPlan plan_memory(const Profile& profile, const RunSettings& settings,
                       const ModelConfig& config, const TensorDirectory& tensors,
                       const MemoryPlanInputs& inputs);

/// Part names, as printed and as MemoryBudget categories where they are charged.
namespace memory_part {
inline constexpr std::string_view overhead = "process overhead";
inline constexpr std::string_view dense = "resident dense weights";
inline constexpr std::string_view kv = "KV cache at max_context";
inline constexpr std::string_view io = "I/O slots and prefetch";
inline constexpr std::string_view working = "one step's working buffers";
inline constexpr std::string_view activations = "activations and logits";
inline constexpr std::string_view pinned = "pinned experts";
inline constexpr std::string_view lru = "expert LRU cache";
}  // namespace memory_part

}  // namespace glmrt
