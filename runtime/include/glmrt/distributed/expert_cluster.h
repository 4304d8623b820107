// Rank 0's side of expert parallelism: the ranks mpirun started, and for an
// open engine the shards of its routed experts spread over them. While
// attached, the engine's model sends each MoE step's hidden states and
// routing to the ranks that own a chosen expert and adds their sums back,
// rank by rank, so results are deterministic and those of one process
// (to float rounding; exactly with one rank).
#pragma once

#include <glmrt/distributed/cluster_protocol.h>
#include <glmrt/distributed/expert_assignment.h>
#include <glmrt/distributed/mpi_world.h>
#include <glmrt/engine/engine.h>
#include <glmrt/model/remote_experts.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace glmrt {

/// Where the exchange's time went, summed over MoE steps.
struct ExchangeTimes {
  uint64_t steps = 0;       // MoE layer steps that went through the exchange
  double send_seconds = 0;  // gathering, encoding and posting the requests
  double wait_seconds = 0;  // after this rank's own experts, until every sum was in
  /// What the exchange itself cost: sending, plus the part of the wait that
  /// the slowest rank's own work (decode, experts, encode) and this rank's
  /// experts meanwhile do not explain (the wire, the polling, the copies).
  double overhead_seconds = 0;
  uint64_t bytes_sent = 0, bytes_received = 0;
};

class ShardedExperts;

class ExpertCluster {
 public:
  /// Rank 0 of `world`; a SIGTERM while it waits for a rank names that rank.
  explicit ExpertCluster(MpiWorld& world);
  ExpertCluster(const ExpertCluster&) = delete;
  ExpertCluster& operator=(const ExpertCluster&) = delete;
  /// Tells every rank to stop.
  ~ExpertCluster();

  int ranks() const { return world_.size(); }
  /// How rank 0 opens the model in `model_dir` under `profile`: decides the
  /// shards now (expert_shard_plan.h), so its pinned set takes its own shard
  /// only; the next attach() uses them. Empty options while an engine is
  /// attached (the next one runs on rank 0 alone).
  EngineOptions engine_options(const Profile& profile, const std::filesystem::path& model_dir);
  /// Has every rank open `engine`'s model and take its shard (refusing a
  /// rank whose files are missing or whose model, glmrt version or profile
  /// differs, naming the rank and the key), then routes the engine's MoE
  /// steps through them until the result is destroyed. One engine at a time:
  /// while one is attached this returns nullptr (the other runs locally).
  std::unique_ptr<ShardedExperts> attach(Engine& engine);

 private:
  friend class ShardedExperts;
  MpiWorld& world_;
  bool attached_ = false;
  std::optional<ExpertAssignment> planned_;  // for the next attach()
};

class ShardedExperts final : public RemoteExperts {
 public:
  ShardedExperts(ExpertCluster& cluster, Engine& engine);
  ShardedExperts(const ShardedExperts&) = delete;
  ShardedExperts& operator=(const ShardedExperts&) = delete;
  /// Detaches from the model; the ranks close their copy.
  ~ShardedExperts() override;

  bool runs_here(int layer, int32_t expert) const override { return rank_of(layer, expert) == 0; }
  void send_step(int layer, std::span<const float> x, const PositionRouting& routing,
                 int next_layer, std::span<const int32_t> next_predicted) override;
  void add_results(std::span<float> out) override;
  void prefetch(int layer, std::span<const int32_t> predicted) override;

  int ranks() const { return world_.size(); }
  const ExpertAssignment& assignment() const { return assignment_; }
  const ExchangeTimes& times() const { return times_; }
  cluster::Wire wire() const { return wire_; }
  /// Every rank's expert-store counters, rank 0's from its own store.
  std::vector<cluster::Counters> rank_counters();
  /// Runs `action` (on the thread that noticed) when a rank fault ends a
  /// step; every later step fails at once with the same RankFault.
  void on_fault(std::function<void()> action) { on_fault_ = std::move(action); }
  /// The fault that stopped the shards (empty: none).
  const std::string& fault_message() const { return fault_message_; }
  /// Under serve: a rank that stops answering fails the step it was in
  /// (RankFault) and is left out from then on, its experts run by the
  /// others (rank 0 with `placement: shard`), while they can cover them;
  /// only then does on_fault's action run.
  void serve_on_without_lost_ranks() { serve_on_ = true; }

 private:
  /// Waits for one answer from each of `ranks`, at most `seconds`; fails
  /// naming the ranks that did not answer and `what` rank 0 waited for.
  std::vector<Bytes> collect(const std::vector<int>& ranks, double seconds,
                             const std::string& what);
  void handshake();
  [[noreturn]] void fault(std::string message);
  /// Whether the ranks left, less `gone`, can run every expert.
  bool can_cover_without(const std::vector<int>& gone) const;
  /// Leaves `gone` (named `names`) out and fails the step (a RankFault).
  [[noreturn]] void leave_out(const std::vector<int>& gone, const std::string& names,
                              double seconds, const std::string& what);
  /// The rank `expert` of store row `layer` runs on in the step being made.
  int rank_of(int layer, int32_t expert) const {
    if (least_loaded_) return placed_[cell(layer, expert)];
    const int owner = assignment_.owner(layer, expert);
    return world_.lost(owner) ? 0 : owner;  // rank 0 covers a lost rank's shard
  }
  size_t cell(int layer, int32_t expert) const {
    return static_cast<size_t>(layer) * static_cast<size_t>(assignment_.experts()) +
           static_cast<size_t>(expert);
  }
  /// distributed.placement least_loaded: places `ids` of row `layer` (one
  /// step's experts, or the next layer's read-ahead, `ahead`) by where
  /// each is in memory and what each rank has queued (step_placement.h).
  void place(int layer, std::span<const int32_t> ids, bool ahead, std::vector<double>& queued);
  /// What each rank's drive still reads for row `layer`: the reads ahead
  /// it was asked for that it took (they are in its memory or on their way).
  std::vector<double> queued_reads(int layer);

  ExpertCluster& cluster_;
  MpiWorld& world_;
  Engine& engine_;
  ExpertAssignment assignment_;
  cluster::Wire wire_ = cluster::Wire::f32;
  double timeout_seconds_;
  std::vector<std::string> hosts_;  // by rank
  ExchangeTimes times_;
  // The step in flight: its number, layer, and per rank the positions sent.
  uint64_t sequence_ = 0;
  int step_layer_ = -1;
  int64_t step_rows_ = 0;
  std::vector<int> step_ranks_;
  std::vector<std::vector<int64_t>> positions_;  // by rank
  bool step_pending_ = false;
  std::string fault_message_;
  std::function<void()> on_fault_;
  double step_send_seconds_ = 0;
  Clock::time_point step_sent_{};
  // distributed.placement least_loaded. By rank, [rows, experts]: where each
  // expert runs now, and what rank 0 knows each rank holds (its answers say
  // after every step) and asked it to read ahead.
  bool serve_on_ = false;
  bool least_loaded_ = false;
  std::vector<int> holders_;
  std::vector<int16_t> placed_;
  std::vector<std::vector<uint8_t>> resident_, ahead_;
  std::vector<uint8_t> own_resident_;  // rank 0's own, one row, taken when placing
};

}  // namespace glmrt
