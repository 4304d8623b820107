// Everything a command needs to run a model under a profile, assembled once:
// memory budget, plugin host and the chosen plugins, the model's tensors,
// resident weights and expert store. Members are declared in dependency order
// so destruction runs the other way.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/draft/draft_setup.h>
#include <glmrt/experts/expert_store.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/history/routing_fanout.h>
#include <glmrt/history/routing_trace.h>
#include <glmrt/history/usage_history.h>
#include <glmrt/host/plugin_host.h>
#include <glmrt/kv/kv_cache.h>
#include <glmrt/memory/memory_estimates.h>
#include <glmrt/memory/memory_plan.h>
#include <glmrt/memory/run_settings.h>
#include <glmrt/model/model.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/profile/profile.h>
#include <glmrt/weights/tensor_loader.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

namespace glmrt {

/// How much of a model an engine opens.
struct EngineOptions {
  /// The routed experts this process runs (empty: every one); only these are
  /// pinned. Expert parallelism gives each rank its shard.
  std::function<bool(int layer, int32_t expert)> runs_expert;
  /// No resident weights and no model: the expert store, the kernels and the
  /// config only, for a rank that runs routed experts for another.
  bool experts_only = false;
  /// This process's rank under mpirun (named in its memory plan).
  int rank = 0;
};

class Engine {
 public:
  /// Loads the model in `model_dir` (or the profile's `model` when empty).
  static std::unique_ptr<Engine> open(const Profile& profile,
                                      const std::filesystem::path& model_dir = {},
                                      const EngineOptions& options = {});
  /// The folder open() loads: `model_dir`, or the profile's `model` when
  /// empty (neither is an error). For checks made before the model loads.
  static std::filesystem::path model_dir_for(const Profile& profile,
                                             const std::filesystem::path& model_dir = {});

  /// The model (there is none with EngineOptions::experts_only).
  Model& model() { return *model_; }
  const ModelConfig& config() const { return config_; }
  KernelsBackend& kernels() { return backend_; }
  const KernelsBackend& kernels() const { return backend_; }
  const Profile& profile() const { return profile_; }
  /// The settings resolved from the profile and the model (the memory plan's too).
  const RunSettings& settings() const { return settings_; }
  MemoryBudget& budget() { return budget_; }
  ExpertStore& experts() { return *experts_; }
  const ExpertStore& experts() const { return *experts_; }
  const std::filesystem::path& model_dir() const { return model_dir_; }
  const PluginInfo& kernels_info() const { return kernels_.info(); }
  const PluginInfo& io_info() const { return io_.info(); }
  const HostServices& services() const { return services_; }
  /// How the resident weights were read, and the whole open's wall time
  /// (plugins, headers, resident weights, expert layouts).
  const LoadSummary& load_summary() const { return load_; }
  double open_seconds() const { return open_seconds_; }

  /// A fresh cache for one sequence, sized by the profile.
  KvCache new_cache();

  /// A new drafter for one sequence as the profile says (plugins.draft and the
  /// draft-length keys), or std::nullopt for `plugins.draft: none`. Whether
  /// the checkpoint can serve the drafter was checked when the engine opened.
  std::optional<DraftSetup> draft_setup();
  /// A new drafter of any choice with any policy (`glmrt bench` compares
  /// drafters on one engine); throws when the checkpoint cannot serve it.
  DraftSetup draft_setup(const PluginChoice& choice, DraftPolicy policy);
  /// Where the memory goes (worked out and checked before loading).
  const MemoryPlan& memory_plan() const { return plan_; }
  /// Positions a prefill call takes at most, as the memory plan resolved
  /// memory.prefill_chunk (0 with a budget: the largest chunk that fits).
  int64_t prefill_chunk() const { return plan_.prefill_chunk; }
  /// 32 hex digits identifying config.json and the safetensors headers.
  const std::string& model_id();
  /// The expert usage history (nullptr when `memory.history: off`).
  UsageHistory* history() { return history_ ? &*history_ : nullptr; }
  /// Saves the history's new counts (merging with other processes); a
  /// failure is a warning, never an error: called at the end of each
  /// generation and when the engine closes.
  void save_history() noexcept;
  /// Writes every MoE step's routing to `file` from now on (a routing trace;
  /// `force` lets it replace an existing file that is not one).
  void record_routing(const std::filesystem::path& file, bool force = false);
  /// Ends the trace record_routing started and puts it in place; throws
  /// naming the file when a write failed. Without it the trace is dropped.
  void finish_routing_trace();
  /// Expert-store rows (main layers + MTP) and routed experts per row.
  int expert_rows() const;

  ~Engine();

 private:
  using ExpertLayouts = std::vector<std::vector<ExpertLayout>>;
  Engine(const Profile& profile, std::filesystem::path model_dir, TensorDirectory tensors,
         ModelConfig config, ExpertLayouts layouts, const EngineOptions& options);
  static std::vector<glmrt_weight_format> kernel_formats(
      const std::vector<UsedWeightFormat>& formats);
  /// Refuses, before any tensor is read, a kernels plugin that cannot run
  /// one of the formats this run uses.
  void check_formats_supported() const;

  Profile profile_;
  std::filesystem::path model_dir_;
  ModelConfig config_;
  RunSettings settings_;
  MemoryBudget budget_;
  HostServices services_;
  PluginHost host_;
  std::vector<UsedWeightFormat> formats_;  // every weight format the run multiplies with
  PluginHandle<plugin::Kernels> kernels_;
  KernelsBackend backend_;  // kernels_ as the model calls it
  PluginHandle<plugin::Io> io_;
  TensorDirectory tensors_;
  MemoryPlan plan_;
  std::string model_id_;
  std::optional<UsageHistory> history_;
  bool history_save_warned_ = false;
  std::unique_ptr<RoutingTraceWriter> routing_trace_;
  RoutingFanout routing_;
  std::unique_ptr<IoChannel> io_channel_;
  std::unique_ptr<ExpertStore> experts_;
  std::unique_ptr<Model> model_;
  LoadSummary load_;
  double open_seconds_ = 0;
};

/// The draft-length keys of a profile.
DraftPolicy draft_policy(const Profile& profile);

}  // namespace glmrt
