// The shards rank 0 gives a model's routed experts, decided from the
// profile, the model's headers and its usage history before the model opens,
// so that rank 0's own pinned set holds experts of its own shard only.
#pragma once

#include <glmrt/distributed/expert_assignment.h>
#include <glmrt/profile/profile.h>

#include <filesystem>

namespace glmrt {

/// `distributed.shard` over `ranks` ranks (rank 0 among the holders unless
/// `distributed.rank0_experts: false`): from the history when it is on and
/// holds counts, else by expert id.
ExpertAssignment plan_expert_shards(const Profile& profile, const std::filesystem::path& model_dir,
                                    int ranks);

}  // namespace glmrt
