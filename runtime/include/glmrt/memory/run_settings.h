// The settings a run works with, resolved once from the profile (and the
// model's config.json where a default depends on the model): the engine, the
// memory plan and `glmrt profile check` read this one object, so a default or
// a derivation is written once and the plan never disagrees with the run.
#pragma once

#include <glmrt/model_files/model_config.h>
#include <glmrt/profile/profile.h>

#include <filesystem>
#include <optional>

namespace glmrt {

struct RunSettings {
  int threads = 1;                 // `threads`, or for 0 every core this process may use
  int prefetch_slots = 0;          // per MoE layer: memory.prefetch, or auto: experts per token
  bool prefetch_auto = false;      // memory.prefetch: auto (each layer's depth chosen as it runs)
  bool expert_cache_auto = false;  // memory.expert_cache: auto (the budget sizes the LRU)
  /// LRU experts per MoE layer: memory.expert_cache; under `auto`, what the
  /// LRU gets when there is no budget to size it from.
  int expert_cache_per_layer = 0;
  /// Where the usage history lives (memory.history, else the user's cache
  /// folder); nullopt when `memory.history: off`.
  std::optional<std::filesystem::path> history_folder;
  /// Rows of the usage history and of routing traces: the main layers, plus
  /// one for the MTP layer when config.json declares one.
  int history_rows = 0;
  /// Conversations `glmrt serve` keeps cached (memory.kv_slots, auto resolved).
  int kv_slots = 1;
};

/// Threads the profile asks for (0 = every core this process may use).
int effective_threads(const Profile& profile);

/// Prefetch slots per MoE layer: the profile's `memory.prefetch`, or for
/// `auto` the experts one token routes to (`experts_per_token`).
int effective_prefetch_slots(const Profile& profile, int experts_per_token);

/// `memory.kv_slots: auto` gives one conversation slot per this many tokens
/// of max_context (the KV memory the plan sets aside), at most kMaxAutoKvSlots:
/// the slots share that memory, so a slot is worth keeping when a
/// conversation of this length fits beside the others.
inline constexpr int kTokensPerAutoKvSlot = 256;
inline constexpr int kMaxAutoKvSlots = 16;

/// Conversation slots: the profile's `memory.kv_slots`, or for `auto`
/// max_context / kTokensPerAutoKvSlot within 1..kMaxAutoKvSlots.
int effective_kv_slots(const Profile& profile);

RunSettings resolve_run_settings(const Profile& profile, const ModelConfig& config);

}  // namespace glmrt
