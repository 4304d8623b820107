#include <glmrt/history/pinned_choice.h>

namespace glmrt {

std::vector<ExpertKey> choose_pinned_experts(const ExpertUsage& usage, uint64_t bytes,
                                             uint64_t expert_bytes,
                                             const std::vector<bool>& has_experts,
                                             const std::function<bool(const ExpertKey&)>& keep) {
  std::vector<ExpertKey> chosen;
  if (expert_bytes == 0) return chosen;
  const uint64_t room = bytes / expert_bytes;
  for (const ExpertKey& k : usage.ranked()) {
    if (chosen.size() >= room) break;
    if (k.layer < static_cast<int>(has_experts.size()) && has_experts[k.layer] &&
        (!keep || keep(k)))
      chosen.push_back(k);
  }
  return chosen;
}

}  // namespace glmrt
