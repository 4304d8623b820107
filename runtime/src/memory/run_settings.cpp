#include <glmrt/history/usage_history.h>
#include <glmrt/memory/run_settings.h>

#include <omp.h>

#include <algorithm>

namespace glmrt {

int effective_threads(const Profile& profile) {
  return profile.threads > 0 ? profile.threads : omp_get_num_procs();
}

int effective_prefetch_slots(const Profile& profile, int experts_per_token) {
  return profile.prefetch_slots ? *profile.prefetch_slots : experts_per_token;
}

int effective_kv_slots(const Profile& profile) {
  if (profile.kv_slots) return *profile.kv_slots;
  return std::clamp(profile.max_context / kTokensPerAutoKvSlot, 1, kMaxAutoKvSlots);
}

RunSettings resolve_run_settings(const Profile& profile, const ModelConfig& config) {
  RunSettings s;
  s.threads = effective_threads(profile);
  s.prefetch_slots = effective_prefetch_slots(profile, config.num_experts_per_tok);
  s.prefetch_auto = !profile.prefetch_slots.has_value();
  s.expert_cache_auto = profile.expert_cache_auto;
  s.expert_cache_per_layer =
      profile.expert_cache_auto ? kDefaultExpertCachePerLayer : profile.expert_cache_per_layer;
  if (profile.history) s.history_folder = history_root(profile.history_folder);
  s.history_rows = config.num_hidden_layers + (config.num_nextn_predict_layers > 0 ? 1 : 0);
  s.kv_slots = effective_kv_slots(profile);
  return s;
}

}  // namespace glmrt
