// A rank other than 0: it serves rank 0 until told to stop. For each model
// rank 0 opens it opens the same profile and its own copy of the model's
// files (experts only: no resident weights), runs the full expert pipeline
// (io plugin, slots, read-ahead, pinned set, budget) on its shard, and
// answers each MoE step with the weighted sums of its experts.
#pragma once

#include <glmrt/distributed/mpi_world.h>

#include <filesystem>

namespace glmrt {

/// Returns the process's exit status. `own_model_dir` (this rank's --model;
/// empty: the folder rank 0 names) lets each host keep the model elsewhere.
int run_expert_worker(MpiWorld& world, const std::filesystem::path& own_model_dir);

}  // namespace glmrt
