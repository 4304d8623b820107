// A profile: which plugins a host runs and how, its memory budget, the
// precision of weights and caches, generation defaults and validate thresholds.
// Loaded strictly from YAML (see configs/*.yaml and docs/profiles.md).
#pragma once

#include <glmrt/base/weight_precision.h>
#include <glmrt/text/chat_template_choice.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace glmrt {

/// Routed experts an MoE layer's LRU keeps when the profile does not say
/// (`memory.expert_cache` absent, or `auto` with no budget to size it from).
inline constexpr int kDefaultExpertCachePerLayer = 16;
/// The most conversation slots `memory.kv_slots` (and `glmrt serve --slots`)
/// may ask for: each is a session with its own drafter and bookkeeping.
inline constexpr int kMaxKvSlots = 256;
/// Sequences `glmrt serve` decodes at once when --parallel is not given: as
/// many as the budget holds (see Profile::kv_sequences), at most this many.
inline constexpr int kAutoKvSequences = 4;
/// The most sequences `glmrt serve --parallel` may decode at once.
inline constexpr int kMaxKvSequences = 64;

struct PluginChoice {
  /// A plugin name ("kernels-scalar"), "auto" (kernels only: best supported
  /// score), or a path to a .so (absolute, or relative to the profile file).
  std::string name;
  /// Passed verbatim to the plugin's create(); the plugin rejects unknown keys.
  std::map<std::string, std::string> settings;
  /// "file:line" of the key that chose it, for error messages.
  std::string origin;
};

struct GenerationDefaults {
  std::optional<double> temperature;  // 0 = greedy
  std::optional<double> top_p;
  std::optional<int> top_k;
  std::optional<double> min_p;
  std::optional<double> repetition_penalty;
  std::optional<double> presence_penalty;
  std::optional<double> frequency_penalty;
  std::optional<uint64_t> seed;
  std::optional<int> max_new_tokens;
};

struct ValidateThresholds {
  double min_top1 = 1.0;     // teacher-forced top-1 agreement (fraction of checked rows)
  double max_kl = 1e-6;      // mean KL(reference || ours), nats
  double max_dlogit = 1e-3;  // max |Δlogit|
  double min_margin = 1e-3;  // rows whose reference top1-top2 margin is below are not held to top-1
  bool greedy_identical = true;  // every greedy token must match
};

/// `distributed:`: expert parallelism over MPI (docs/distributed.md). Read
/// only when glmrt runs under mpirun with more than one rank.
struct DistributedSettings {
  /// How each MoE layer's routed experts are spread over the ranks: `usage`
  /// evens the expected load from the usage history (by id without one),
  /// `id` gives each rank a contiguous range of expert ids.
  enum class Shard { usage, id };
  Shard shard = Shard::usage;
  /// Hidden states and sums on the wire: `auto` = f32 when the experts are
  /// f32 (results as one process's), bf16 otherwise (half the bytes).
  enum class Wire { automatic, f32, bf16 };
  Wire wire = Wire::automatic;
  /// Where a step's experts run: `shard` on their shard's rank always;
  /// `least_loaded`: on a rank that has one in memory, else (a miss on every
  /// rank) on the rank with the fewest reads queued in that step.
  enum class Placement { shard, least_loaded };
  Placement placement = Placement::least_loaded;
  bool rank0_experts = true;    // rank 0 owns a shard too (false: it only coordinates)
  double timeout_seconds = 60;  // the longest rank 0 waits for a rank's answer
};

/// `routing:`: how the MoE router may depart from the model's exact choice.
struct RoutingSettings {
  /// `routing.cache_bias`: in decode and verification steps, an expert already
  /// in RAM may replace a selected one whose selection score (sigmoid +
  /// e_score_correction_bias) is within this much of it (docs/expert-cache.md,
  /// *Cache-aware routing*). 0 = the model's exact routing.
  double cache_bias = 0;
};

struct Profile {
  std::filesystem::path file;                  // where it was loaded from (empty for defaults)
  std::optional<std::filesystem::path> model;  // resolved against the profile's folder
  /// `chat_template`: builtin renders with the built-in template even when
  /// the model ships another (--chat-template overrides it).
  text::ChatTemplateChoice chat_template = text::ChatTemplateChoice::model;
  std::vector<std::filesystem::path> plugin_paths;  // resolved likewise

  PluginChoice kernels{"kernels-scalar", {}, {}};
  PluginChoice io{"io-buffered", {}, {}};
  std::optional<PluginChoice> draft;  // absent = no speculative decoding
  int max_draft_tokens = 4;           // the most drafts one decode step verifies
  int draft_min_tokens = 1;           // fewer drafts than this are not verified
  bool draft_adaptive = true;         // the cost model picks each step's draft count

  int threads = 0;  // 0 = every core the process may use

  // Per-row ("int4") or per-group ("int4-g64") for the integer formats.
  WeightPrecision dense_bits = WeightBits::f32;
  WeightPrecision expert_bits = WeightBits::f32;
  CacheType kv_cache = CacheType::f32;

  uint64_t memory_budget_bytes = 0;  // 0 = no limit beyond the machine
  /// Routed experts kept per MoE layer (LRU), `memory.expert_cache`.
  int expert_cache_per_layer = kDefaultExpertCachePerLayer;
  /// Slots per MoE layer for experts read ahead, beyond expert_cache
  /// (`memory.prefetch`); nullopt = auto: the model's experts per token.
  std::optional<int> prefetch_slots;
  int max_context = 4096;  // tokens the KV cache is sized for
  /// `memory.kv_slots`: conversations `glmrt serve` keeps cached, sharing the
  /// KV memory of one max_context sequence; nullopt = auto (from max_context:
  /// see effective_kv_slots).
  std::optional<int> kv_slots;
  /// Sequences decoded at once, each with its own KV cache of max_context
  /// (`glmrt serve --parallel`; not read from the YAML). 0 = auto: the most
  /// the budget holds, up to kAutoKvSequences (MemoryPlan::kv_sequences).
  int kv_sequences = 1;
  int prefill_chunk = 0;  // positions one forward call takes at most (0 = the whole prompt)
  /// `memory.budget: auto`: a share of MemAvailable (cgroup limits respected)
  /// measured when the model opens; memory_budget_bytes is then ignored.
  bool memory_budget_auto = false;
  /// `memory.expert_cache: auto`: the LRU gets what the budget leaves.
  bool expert_cache_auto = false;
  /// `memory.pinned`: bytes of most-used experts kept in RAM for the whole
  /// run (0 = none); nullopt = auto (a share of the expert memory).
  std::optional<uint64_t> pinned_bytes;
  bool mlock_pinned = false;  // `memory.mlock`: lock the pinned set in RAM
  /// `memory.history`: expert usage remembered across runs (off: nothing is
  /// read or written); history_folder overrides $XDG_CACHE_HOME/glmrt.
  bool history = true;
  std::optional<std::filesystem::path> history_folder;
  /// `memory.verify_checksums` (or `--verify`): a container's files are read
  /// once against its checksums.json before the model loads; a mismatch is
  /// an error naming the file.
  bool verify_checksums = false;

  RoutingSettings routing;
  GenerationDefaults generation;
  ValidateThresholds validate;
  DistributedSettings distributed;
};

/// Loads a profile strictly: an unknown key, a wrong type, a value out of range
/// is a glmrt::Error "FILE:LINE: key `a.b`: what was expected". Relative paths
/// resolve against the profile's folder. Plugins are not resolved here (see
/// PluginHost::check_profile).
Profile load_profile(const std::filesystem::path& file);

}  // namespace glmrt
