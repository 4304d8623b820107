#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/distributed/cluster_protocol.h>
#include <glmrt/distributed/expert_assignment.h>
#include <glmrt/distributed/expert_worker.h>
#include <glmrt/distributed/model_manifest.h>
#include <glmrt/distributed/profile_keys.h>
#include <glmrt/engine/engine.h>
#include <glmrt/history/model_id.h>
#include <glmrt/model/routed_experts.h>
#include <glmrt/profile/profile.h>

#include <chrono>
#include <memory>
#include <optional>

namespace glmrt {
namespace {

using namespace cluster;

class ExpertWorker {
 public:
  ExpertWorker(MpiWorld& world, std::filesystem::path own_model_dir)
      : world_(world), own_model_dir_(std::move(own_model_dir)) {}

  int serve() {
    for (;;) {
      const Bytes request = next_request();
      ByteReader in(request, fmt::format("rank {}: rank 0's request", world_.rank()));
      switch (read_op(in)) {
        case Op::open:
          open(decode_open(in));
          break;
        case Op::assign:
          assign(decode_assign(in));
          break;
        case Op::step:
          step(in);
          break;
        case Op::stats:
          reply(encode(counters()));
          break;
        case Op::prefetch:
          prefetch(in);
          break;
        case Op::close:
          close();
          break;
        case Op::stop:
          close();
          return 0;
      }
    }
  }

 private:
  Bytes next_request() {
    PollBackoff backoff;
    for (;;) {
      if (auto bytes = world_.try_receive(0, kToWorker)) return std::move(*bytes);
      backoff.wait();
    }
  }

  void reply(Bytes bytes) { world_.send(0, kToRoot, std::move(bytes)); }

  void close() {
    engine_.reset();
    assignment_.reset();
  }

  void open(const Open& request) {
    close();
    Hello hello;
    hello.version = GLMRT_VERSION;
    hello.host = world_.host();
    try {
      profile_ = load_profile(request.profile_path);
      // Rank 0's `--verify`: this rank's copy is checked when its shard opens.
      if (request.verify) profile_.verify_checksums = true;
      model_dir_ =
          !own_model_dir_.empty() ? own_model_dir_ : std::filesystem::path(request.model_dir);
      hello.model_dir = model_dir_.string();
      const TensorDirectory tensors = TensorDirectory::open(model_dir_);
      hello.model_id = model_id(model_dir_, tensors);
      hello.profile_keys = profile_keys(request.profile_path);
      hello.manifest = model_manifest(model_dir_);
    } catch (const std::exception& e) {
      hello.error = e.what();
    }
    reply(encode(hello));
  }

  void assign(Assign request) {
    Ready ready;
    try {
      assignment_ = ExpertAssignment::from_owners(request.rows, request.experts, request.ranks,
                                                  std::move(request.owners));
      const ExpertAssignment& a = *assignment_;
      const int rank = world_.rank();
      EngineOptions options;
      options.experts_only = true;
      options.rank = rank;
      options.runs_expert = [&a, rank](int layer, int32_t expert) {
        return layer < a.rows() && a.owner(layer, expert) == rank;
      };
      engine_ = Engine::open(profile_, model_dir_, options);
      const auto rows = engine_->experts().expert_rows();
      if (static_cast<int>(rows.size()) != a.rows() ||
          engine_->config().n_routed_experts != a.experts())
        fail("{}: {} expert rows of {} experts, but rank 0's model has {} of {}", model_dir_,
             rows.size(), engine_->config().n_routed_experts, a.rows(), a.experts());
      ready.experts_owned = a.experts_owned(rank);
      ready.fingerprint = a.fingerprint();
    } catch (const std::exception& e) {
      close();
      ready.error = e.what();
    }
    reply(encode(ready));
  }

  void step(ByteReader& in) {
    const auto t0 = std::chrono::steady_clock::now();
    Sums sums;
    Wire wire = Wire::f32;
    try {
      if (!engine_) fail("a step arrived before the model was opened");
      const int64_t D = engine_->config().hidden_size;
      const Step request = decode_step(in, D, engine_->config().n_routed_experts);
      sums.sequence = request.sequence;
      wire = request.wire;
      const int layer = request.layer;
      if (layer < 0 || layer >= assignment_->rows())
        fail("layer {} is not an expert row (0..{})", layer, assignment_->rows() - 1);
      PositionRouting routing(request.counts.size());
      size_t next = 0;
      for (size_t r = 0; r < routing.size(); ++r)
        for (int32_t c = 0; c < request.counts[r]; ++c, ++next) {
          const int32_t id = request.ids[next];
          if (!any_expert() && assignment_->owner(layer, id) != world_.rank())
            fail("rank 0 sent expert {} of layer {}, which rank {} owns", id, layer,
                 assignment_->owner(layer, id));
          routing[r].push_back({id, request.weights[next]});
        }
      sums.rows.assign(request.rows.size(), 0.f);
      const RoutedExpertsCall call{
          engine_->config(), engine_->kernels(), engine_->experts(), scratch_, layer, nullptr};
      const int next_layer = request.next_layer;
      routed_expert_sum(call, request.rows, routing, sums.rows, [&](std::span<const float>) {
        if (next_layer >= 0 && next_layer < assignment_->rows() && !request.predicted.empty())
          engine_->experts().prefetch(next_layer, request.predicted);
      });
      if (any_expert()) {
        report_resident(layer, sums);
        report_resident(next_layer, sums);
      }
    } catch (const std::exception& e) {
      sums.error = e.what();
      sums.rows.clear();
    }
    sums.busy_seconds = seconds_since(t0);
    reply(encode(sums, wire));
  }

  // A guess only: one this rank cannot act on is dropped, never an error.
  void prefetch(ByteReader& in) {
    if (!engine_) return;
    try {
      const auto [layer, ids] = decode_prefetch(in, engine_->config().n_routed_experts);
      if (layer < 0 || layer >= assignment_->rows()) return;
      std::vector<int32_t> own;
      for (int32_t id : ids)
        if (any_expert() || assignment_->owner(layer, id) == world_.rank()) own.push_back(id);
      if (!own.empty()) engine_->experts().prefetch(layer, own);
    } catch (const std::exception&) {
    }
  }

  /// Whether rank 0 places experts by load (any expert may come here), not by shard.
  bool any_expert() const {
    return profile_.distributed.placement == DistributedSettings::Placement::least_loaded;
  }

  /// What rank 0 needs to place the coming steps: the experts of `row` in
  /// memory here or being read (the step's row after the step, the next
  /// row after its reads ahead; nothing without a next row).
  void report_resident(int row, Sums& sums) {
    if (row < 0 || row >= assignment_->rows()) return;
    resident_.resize(static_cast<size_t>(assignment_->experts()));
    engine_->experts().in_memory(row, resident_);
    Sums::Resident& report = sums.resident.emplace_back();
    report.layer = row;
    for (size_t id = 0; id < resident_.size(); ++id)
      if (resident_[id]) report.experts.push_back(static_cast<int32_t>(id));
  }

  Counters counters() {
    Counters c;
    c.rank = world_.rank();
    if (!engine_) return c;
    return cluster::counters_of(engine_->experts().stats(), world_.rank(),
                                assignment_->experts_owned(world_.rank()));
  }

  MpiWorld& world_;
  std::filesystem::path own_model_dir_;
  Profile profile_;
  std::filesystem::path model_dir_;
  std::optional<ExpertAssignment> assignment_;
  std::unique_ptr<Engine> engine_;
  MoeScratch scratch_;
  std::vector<uint8_t> resident_;  // one row's residency, reused
};

}  // namespace

int run_expert_worker(MpiWorld& world, const std::filesystem::path& own_model_dir) {
  return ExpertWorker(world, own_model_dir).serve();
}

}  // namespace glmrt
