#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/warning.h>
#include <glmrt/distributed/expert_cluster.h>
#include <glmrt/distributed/expert_shard_plan.h>
#include <glmrt/distributed/fault_report.h>
#include <glmrt/distributed/profile_keys.h>

#include <algorithm>
#include <chrono>
#include <set>

namespace glmrt {

using namespace cluster;

namespace {

std::vector<int> other_ranks(int size) {
  std::vector<int> ranks;
  for (int r = 1; r < size; ++r) ranks.push_back(r);
  return ranks;
}

Wire wire_for(const Profile& profile) {
  // `auto` is f32 whatever the experts' precision: bf16 rows moved a step's
  // logits by ~1e-3 and a sampled answer away from one process's; half the
  // bytes on the wire is an explicit choice.
  return profile.distributed.wire == DistributedSettings::Wire::bf16 ? Wire::bf16 : Wire::f32;
}

}  // namespace

ExpertCluster::ExpertCluster(MpiWorld& world) : world_(world) {
  FaultReport::install();
}

ExpertCluster::~ExpertCluster() {
  try {
    for (int r = 1; r < world_.size(); ++r) world_.send(r, kToWorker, encode_op(Op::stop));
  } catch (const std::exception& e) {
    warn("the expert ranks were not told to stop: {}", e.what());
  }
}

EngineOptions ExpertCluster::engine_options(const Profile& profile,
                                            const std::filesystem::path& model_dir) {
  if (attached_) return {};
  planned_ = plan_expert_shards(profile, model_dir, world_.size());
  EngineOptions options;
  options.runs_expert = [this](int layer, int32_t expert) {
    return planned_ && layer < planned_->rows() && planned_->owner(layer, expert) == 0;
  };
  return options;
}

std::unique_ptr<ShardedExperts> ExpertCluster::attach(Engine& engine) {
  if (attached_) return nullptr;
  return std::make_unique<ShardedExperts>(*this, engine);
}

ShardedExperts::ShardedExperts(ExpertCluster& cluster, Engine& engine)
    : cluster_(cluster),
      world_(cluster.world_),
      engine_(engine),
      wire_(wire_for(engine.profile())),
      timeout_seconds_(engine.profile().distributed.timeout_seconds),
      hosts_(static_cast<size_t>(world_.size())),
      positions_(static_cast<size_t>(world_.size())) {
  hosts_[0] = world_.host();
  handshake();
  const Profile& profile = engine_.profile();
  least_loaded_ = world_.size() > 1 &&
                  profile.distributed.placement == DistributedSettings::Placement::least_loaded;
  if (least_loaded_) {
    if (profile.distributed.rank0_experts) holders_.push_back(0);
    for (int r = 1; r < world_.size(); ++r) holders_.push_back(r);
    placed_ = assignment_.owners();
    const size_t cells = placed_.size();
    resident_.assign(static_cast<size_t>(world_.size()), std::vector<uint8_t>(cells, 0));
    ahead_ = resident_;
  }
  cluster_.attached_ = true;
  engine_.model().set_remote_experts(this);
}

ShardedExperts::~ShardedExperts() {
  engine_.model().set_remote_experts(nullptr);
  cluster_.attached_ = false;
  try {
    for (int r = 1; r < world_.size(); ++r) world_.send(r, kToWorker, encode_op(Op::close));
  } catch (const std::exception& e) {
    warn("the expert ranks were not told the model closed: {}", e.what());
  }
}

void ShardedExperts::handshake() {
  const Profile& profile = engine_.profile();
  const std::vector<int> ranks = other_ranks(world_.size());
  // Opening a rank's copy reads headers and plans its store: give it longer
  // than one step.
  const double open_seconds = std::max(10 * timeout_seconds_, 300.0);
  const Open open{std::filesystem::absolute(profile.file).string(),
                  std::filesystem::absolute(engine_.model_dir()).string(),
                  profile.verify_checksums};
  for (int r : ranks) world_.send(r, kToWorker, encode(open));
  const ProfileKeys ours = profile_keys(profile.file);
  const std::string& model_id = engine_.model_id();
  const std::vector<ManifestEntry> manifest = model_manifest(engine_.model_dir());
  const auto hellos = collect(ranks, open_seconds, "its answer to opening the model");
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    ByteReader in(hellos[i], fmt::format("rank {}'s answer to opening the model", r));
    const Hello hello = decode_hello(in);
    hosts_[r] = hello.host;
    if (!hello.error.empty())
      fail("rank {} (host {}) cannot open the model: {}", r, hello.host, hello.error);
    if (hello.version != GLMRT_VERSION)
      fail("rank {} (host {}) runs glmrt {}, rank 0 runs {}: every rank needs the same glmrt", r,
           hello.host, hello.version, GLMRT_VERSION);
    if (hello.model_id != model_id)
      fail(
          "rank {} (host {}) has a different model: {} has model id {}, rank 0's {} has {} "
          "(config.json and the safetensors headers differ); give every rank a copy of the same "
          "model",
          r, hello.host, hello.model_dir, hello.model_id, engine_.model_dir(), model_id);
    if (const auto diff = manifest_difference(manifest, hello.manifest))
      fail(
          "rank {} (host {}) has a different copy of the model: in {}, {}; give every rank a "
          "copy of the same model",
          r, hello.host, hello.model_dir, *diff);
    if (const auto diff = first_difference(ours, hello.profile_keys))
      fail(
          "rank {} (host {}) has a different profile {}: key `{}` is `{}` there and `{}` on rank "
          "0; every rank needs the same profile (only `model` may differ)",
          r, hello.host, profile.file, diff->key, diff->theirs, diff->ours);
  }

  const std::vector<bool> rows = engine_.experts().expert_rows();
  if (cluster_.planned_ && cluster_.planned_->rows() == static_cast<int>(rows.size())) {
    assignment_ = std::move(*cluster_.planned_);  // the shards rank 0 pinned for
  } else {
    std::vector<int> holders;
    if (profile.distributed.rank0_experts || world_.size() == 1) holders.push_back(0);
    holders.insert(holders.end(), ranks.begin(), ranks.end());
    const bool by_usage =
        profile.distributed.shard == DistributedSettings::Shard::usage && engine_.history();
    assignment_ = by_usage ? ExpertAssignment::by_usage(engine_.history()->totals(), rows, holders,
                                                        world_.size())
                           : ExpertAssignment::by_id(rows, engine_.config().n_routed_experts,
                                                     holders, world_.size());
  }
  cluster_.planned_.reset();
  note("{}", assignment_.describe());
  Assign assign{assignment_.rows(), assignment_.experts(), world_.size(), assignment_.owners()};
  const Bytes assign_bytes = encode(assign);
  for (int r : ranks) world_.send(r, kToWorker, assign_bytes);
  const auto readies = collect(ranks, open_seconds, "its shard of the experts to be opened");
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    ByteReader in(readies[i], fmt::format("rank {}'s answer to its shard", r));
    const Ready ready = decode_ready(in);
    if (!ready.error.empty())
      fail("rank {} (host {}) cannot open its shard of the experts: {}", r, hosts_[r], ready.error);
    if (ready.fingerprint != assignment_.fingerprint())
      fail("rank {} (host {}) holds assignment {:016x}, rank 0 sent {:016x}", r, hosts_[r],
           ready.fingerprint, assignment_.fingerprint());
  }
}

std::vector<Bytes> ShardedExperts::collect(const std::vector<int>& ranks, double seconds,
                                           const std::string& what) {
  std::vector<Bytes> answers(ranks.size());
  std::vector<bool> done(ranks.size());
  size_t left = ranks.size();
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  FaultReport::Waiting waiting(ranks, hosts_, what);
  PollBackoff backoff;
  while (left > 0) {
    bool got = false;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (done[i]) continue;
      if (auto bytes = world_.try_receive(ranks[i], kToRoot)) {
        answers[i] = std::move(*bytes);
        done[i] = true;
        --left;
        got = true;
        waiting.answered(ranks[i]);
      }
    }
    if (left == 0) break;
    const bool ended = FaultReport::terminate_requested();
    if (ended || Clock::now() >= deadline) {
      std::string late;
      for (size_t i = 0; i < ranks.size(); ++i)
        if (!done[i])
          late += fmt::format("{}rank {} (host {})", late.empty() ? "" : ", ", ranks[i],
                              hosts_[ranks[i]].empty() ? "?" : hosts_[ranks[i]]);
      if (ended)
        fault(fmt::format(
            "the job was ended (SIGTERM: mpirun ends every rank when one dies) while rank 0 "
            "waited for {} for {}: that rank stopped; the run is incomplete",
            late, what));
      std::vector<int> gone;
      for (size_t i = 0; i < ranks.size(); ++i)
        if (!done[i]) gone.push_back(ranks[i]);
      if (serve_on_ && can_cover_without(gone)) leave_out(gone, late, seconds, what);
      fault(
          fmt::format("{} did not answer within {:g} s (distributed.timeout_seconds) while rank "
                      "0 waited for {}: the rank stopped or is stuck; the run is incomplete",
                      late, seconds, what));
    }
    if (got)
      backoff.reset();
    else
      backoff.wait();
  }
  return answers;
}

void ShardedExperts::fault(std::string message) {
  fault_message_ = message;
  if (on_fault_) on_fault_();
  throw RankFault(std::move(message));
}

void ShardedExperts::send_step(int layer, std::span<const float> x, const PositionRouting& routing,
                               int next_layer, std::span<const int32_t> next_predicted) {
  // A rank that failed once is not waited for again.
  if (!fault_message_.empty()) throw RankFault(fault_message_);
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t S = static_cast<int64_t>(routing.size());
  const int64_t D = S ? static_cast<int64_t>(x.size()) / S : 0;
  ++sequence_;
  step_layer_ = layer;
  step_rows_ = S;
  step_ranks_.clear();
  if (least_loaded_) {
    std::set<int32_t> chosen;
    for (const auto& position : routing)
      for (const RoutedExpert& e : position) chosen.insert(e.expert);
    const std::vector<int32_t> ids(chosen.begin(), chosen.end());
    std::vector<double> queued = queued_reads(layer);
    place(layer, ids, /*ahead=*/false, queued);
    if (next_layer >= 0) place(next_layer, next_predicted, /*ahead=*/true, queued);
  }
  std::vector<int32_t> counts, predicted;
  std::vector<RoutedExpert> choices;
  std::vector<float> rows;
  for (int r = 1; r < world_.size(); ++r) {
    auto& positions = positions_[static_cast<size_t>(r)];
    positions.clear();
    counts.clear();
    choices.clear();
    predicted.clear();
    for (int64_t s = 0; s < S; ++s) {
      int32_t n = 0;
      for (const RoutedExpert& e : routing[s])
        if (rank_of(layer, e.expert) == r) {
          choices.push_back(e);
          ++n;
        }
      if (n == 0) continue;
      positions.push_back(s);
      counts.push_back(n);
    }
    if (next_layer >= 0)
      for (int32_t id : next_predicted)
        if (rank_of(next_layer, id) == r) predicted.push_back(id);
    if (positions.empty() && predicted.empty()) continue;  // nothing for this rank
    rows.resize(positions.size() * static_cast<size_t>(D));
    for (size_t i = 0; i < positions.size(); ++i)
      std::copy_n(x.begin() + positions[i] * D, D, rows.begin() + static_cast<int64_t>(i) * D);
    Bytes request =
        encode_step(sequence_, layer, next_layer, wire_, counts, choices, predicted, rows);
    times_.bytes_sent += request.size();
    world_.send(r, kToWorker, std::move(request));
    step_ranks_.push_back(r);
  }
  step_pending_ = true;
  ++times_.steps;
  step_send_seconds_ = seconds_since(t0);
  times_.send_seconds += step_send_seconds_;
  step_sent_ = Clock::now();
}

void ShardedExperts::add_results(std::span<float> out) {
  if (!step_pending_) fail("expert exchange: results asked for with no step sent");
  step_pending_ = false;
  const auto t0 = std::chrono::steady_clock::now();
  const double local_seconds = std::chrono::duration<double>(t0 - step_sent_).count();
  const int64_t D = step_rows_ ? static_cast<int64_t>(out.size()) / step_rows_ : 0;
  const std::string what = fmt::format("its expert sums of layer {} ({} position{})", step_layer_,
                                       step_rows_, step_rows_ == 1 ? "" : "s");
  // Answers of an older step (one rank 0 gave up on after an error) are
  // dropped: they come before this step's, in order.
  std::vector<Sums> sums(step_ranks_.size());
  std::vector<int> waiting = step_ranks_;
  std::vector<size_t> slot(static_cast<size_t>(world_.size()));
  for (size_t i = 0; i < step_ranks_.size(); ++i) slot[step_ranks_[i]] = i;
  while (!waiting.empty()) {
    const auto answers = collect(waiting, timeout_seconds_, what);
    std::vector<int> again;
    for (size_t i = 0; i < waiting.size(); ++i) {
      const int r = waiting[i];
      times_.bytes_received += answers[i].size();
      ByteReader in(answers[i], fmt::format("rank {}'s {}", r, what));
      Sums s = decode_sums(in, D, assignment_.experts());
      if (s.sequence < sequence_) {
        again.push_back(r);
        continue;
      }
      if (!s.error.empty())
        fail("rank {} (host {}) failed on layer {}: {}", r, hosts_[r], step_layer_, s.error);
      const size_t expected = positions_[r].size() * static_cast<size_t>(D);
      if (s.sequence != sequence_ || s.rows.size() != expected)
        fault(fmt::format(
            "rank {} (host {}) answered step {} with {} values, rank 0 expected step {} with {}", r,
            hosts_[r], s.sequence, s.rows.size(), sequence_, expected));
      if (least_loaded_)
        for (const Sums::Resident& row : s.resident) {
          // What the rank holds now of the step's row and the next: where
          // those rows' experts run next.
          if (row.layer < 0 || row.layer >= assignment_.rows()) continue;
          const auto first = resident_[r].begin() + static_cast<int64_t>(cell(row.layer, 0));
          std::fill_n(first, assignment_.experts(), uint8_t{0});
          for (int32_t id : row.experts) resident_[r][cell(row.layer, id)] = 1;
        }
      sums[slot[r]] = std::move(s);
    }
    waiting = std::move(again);
  }
  double slowest = 0;
  for (const Sums& s : sums) slowest = std::max(slowest, s.busy_seconds);
  const double waited = seconds_since(t0);
  times_.overhead_seconds +=
      step_send_seconds_ + std::max(0.0, waited - std::max(0.0, slowest - local_seconds));
  // Rank by rank, ascending: the same order every run.
  for (size_t i = 0; i < step_ranks_.size(); ++i) {
    const auto& positions = positions_[step_ranks_[i]];
    const std::vector<float>& rows = sums[i].rows;
    for (size_t k = 0; k < positions.size(); ++k) {
      float* o = out.data() + positions[k] * D;
      const float* y = rows.data() + static_cast<int64_t>(k) * D;
      for (int64_t d = 0; d < D; ++d) o[d] += y[d];
    }
  }
  times_.wait_seconds += seconds_since(t0);
}

void ShardedExperts::prefetch(int layer, std::span<const int32_t> predicted) {
  if (least_loaded_) {
    std::vector<double> queued = queued_reads(layer);
    place(layer, predicted, /*ahead=*/true, queued);
  }
  std::vector<int32_t> own;
  for (int r = 1; r < world_.size(); ++r) {
    own.clear();
    for (int32_t id : predicted)
      if (rank_of(layer, id) == r) own.push_back(id);
    if (!own.empty()) world_.send(r, kToWorker, encode_prefetch(layer, own));
  }
}

std::vector<Counters> ShardedExperts::rank_counters() {
  std::vector<Counters> all;
  all.push_back(counters_of(engine_.experts().stats(), 0, assignment_.experts_owned(0)));
  std::vector<int> ranks;  // a rank left out counts nothing more
  for (int r : other_ranks(world_.size()))
    if (!world_.lost(r)) ranks.push_back(r);
  for (int r : ranks) world_.send(r, kToWorker, encode_op(Op::stats));
  const auto answers = collect(ranks, timeout_seconds_, "its expert counters");
  for (int r = 1, i = 0; r < world_.size(); ++r) {
    if (world_.lost(r)) {
      all.push_back(Counters{r, assignment_.experts_owned(r)});
      continue;
    }
    ByteReader in(answers[static_cast<size_t>(i)], fmt::format("rank {}'s expert counters", r));
    all.push_back(decode_counters(in));
    ++i;
  }
  return all;
}

}  // namespace glmrt
