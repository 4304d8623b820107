#include <glmrt/distributed/expert_shard_plan.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/history/model_id.h>
#include <glmrt/history/usage_history.h>
#include <glmrt/memory/memory_estimates.h>
#include <glmrt/memory/run_settings.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <vector>

namespace glmrt {

ExpertAssignment plan_expert_shards(const Profile& profile, const std::filesystem::path& model_dir,
                                    int ranks) {
  const TensorDirectory tensors = TensorDirectory::open(model_dir);
  const ModelConfig config = load_model_config(model_dir, tensors);
  const int rows = config.num_hidden_layers + (checkpoint_has_mtp(config, tensors) ? 1 : 0);
  std::vector<bool> has_experts;
  for (const auto& layer : plan_expert_layouts(config, tensors, rows))
    has_experts.push_back(!layer.empty());
  std::vector<int> holders;
  if (profile.distributed.rank0_experts || ranks == 1) holders.push_back(0);
  for (int r = 1; r < ranks; ++r) holders.push_back(r);
  const RunSettings settings = resolve_run_settings(profile, config);
  if (profile.distributed.shard == DistributedSettings::Shard::usage && settings.history_folder) {
    const UsageHistory history(settings.history_folder, model_id(model_dir, tensors),
                               settings.history_rows, config.n_routed_experts);
    return ExpertAssignment::by_usage(history.totals(), has_experts, holders, ranks);
  }
  return ExpertAssignment::by_id(has_experts, config.n_routed_experts, holders, ranks);
}

}  // namespace glmrt
