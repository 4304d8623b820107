// The ranks a command runs on: under `mpirun -n N` (N > 1) rank 0 runs the
// command and spreads each engine's routed experts over every rank
// (docs/distributed.md); otherwise there is one process and nothing of MPI.
#pragma once

#include <glmrt/distributed/expert_cluster.h>
#include <glmrt/engine/engine.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace glmrt::cli {

class Ranks {
 public:
  Ranks() = default;  // one process
  explicit Ranks(ExpertCluster& cluster) : cluster_(&cluster) {}
  int count() const { return cluster_ ? cluster_->ranks() : 1; }
  /// Engine::open, and under mpirun with the shards decided first (rank 0
  /// pins experts of its own shard only); spread() the result next.
  std::unique_ptr<Engine> open(const Profile& profile,
                               const std::filesystem::path& model_dir = {}) const {
    if (!cluster_) return Engine::open(profile, model_dir);
    return Engine::open(
        profile, model_dir,
        cluster_->engine_options(profile, Engine::model_dir_for(profile, model_dir)));
  }
  /// Spreads `engine`'s experts over the ranks (nullptr with one process,
  /// or while another engine holds them). Keep it while the engine runs;
  /// destroy it before the engine.
  std::unique_ptr<ShardedExperts> spread(Engine& engine) const {
    return cluster_ ? cluster_->attach(engine) : nullptr;
  }

 private:
  ExpertCluster* cluster_ = nullptr;
};

/// Every rank's expert counters (one entry, rank 0's store, without shards).
std::vector<cluster::Counters> rank_counters(Engine& engine, ShardedExperts* shards);
/// `rank_experts`: one object per rank (rank, experts_owned, lookups, misses, bytes_read).
nlohmann::json rank_experts_json(const std::vector<cluster::Counters>& counters);
/// With shards: the exchange's time per MoE-step and per decode step (over
/// `steps` forward steps), and each rank's counters, each on its own line.
void print_rank_report(std::FILE* out, Engine& engine, ShardedExperts* shards);

}  // namespace glmrt::cli
