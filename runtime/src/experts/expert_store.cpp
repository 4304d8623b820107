#include <glmrt/base/byte_size.h>
#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/experts/expert_store.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace glmrt {
namespace {

constexpr uint64_t kPage = 4096;

}  // namespace

ExpertStore::ExpertStore(std::vector<std::vector<ExpertLayout>> layouts, IoChannel& io,
                         WeightPrecision bits, ExpertPoolSizes sizes, MemoryBudget* budget,
                         int threads)
    : layouts_(std::move(layouts)),
      io_(io),
      sizes_(sizes),
      capacity_(std::max(1, sizes.cache + sizes.prefetch)),
      read_ahead_(io, sizes.prefetch, stats_),
      depth_(layouts_.size(), sizes.prefetch, sizes.auto_depth),
      predictions_(layouts_.size()),
      next_step_predictions_(layouts_.size()),
      next_step_depth_(layouts_.size(), sizes.prefetch, sizes.auto_depth),
      pinned_(io, staging_, budget, layouts_.size()) {
  if (sizes.cache < 0 || sizes.prefetch < 0)
    fail("expert store: cache {} and prefetch {} slots must not be negative", sizes.cache,
         sizes.prefetch);
  threads = std::max(1, threads);
  pools_.resize(layouts_.size());
  uint64_t staging = 0, pools = 0, largest_slot = 0;
  int64_t widest = 0;
  int moe_layers = 0;
  for (size_t i = 0; i < layouts_.size(); ++i) {
    if (layouts_[i].empty()) continue;
    pools_[i] =
        std::make_unique<ExpertLayerPool>(static_cast<int>(i), layouts_[i], io_, bits, capacity_,
                                          sizes.cache, budget, staging_, ahead_staging_, stats_);
    const ExpertLayerPool& pool = *pools_[i];
    staging = std::max(staging, pool.staging_bytes());
    widest = std::max(widest, pool.widest_converted_cols());
    pools += static_cast<uint64_t>(capacity_) * align_up(pool.slot_bytes(), kPage);
    largest_slot = std::max(largest_slot, pool.slot_bytes());
    ++moe_layers;
  }
  const uint64_t scratch = ExpertStaging::scratch_bytes(widest, threads);
  // Reads ahead of experts that need converting land in buffers of their own.
  const int ahead_buffers = staging && io_.asynchronous() ? sizes.prefetch : 0;
  const uint64_t ahead = ReadAheadStaging::bytes_for(ahead_buffers, staging);
  if (budget && budget->limit() != 0 &&
      budget->used() + pools + align_up(staging, kPage) + scratch + ahead > budget->limit())
    fail(
        "memory budget {} cannot hold the expert slots: the resident part already uses {}, and "
        "{} MoE layers x {} slots (memory.expert_cache {} + memory.prefetch {}) x {} per slot "
        "need {} more{}; lower memory.expert_cache or memory.prefetch, or raise memory.budget",
        format_byte_size(budget->limit()), format_byte_size(budget->used()), moe_layers, capacity_,
        sizes_.cache, sizes_.prefetch, format_byte_size(align_up(largest_slot, kPage)),
        format_byte_size(pools),
        staging ? fmt::format(" (+ {} staging for conversion, + {} x {} for reads ahead)",
                              format_byte_size(staging), ahead_buffers, format_byte_size(staging))
                : "");
  if (staging) staging_ = ExpertStaging(staging, widest, threads, budget);
  if (ahead_buffers > 0) ahead_staging_ = ReadAheadStaging(ahead_buffers, staging, budget);
  // Full pools fit in the budget (checked above): fault their slots in from
  // now on, off the steps' path, on as many threads as the steps use (the
  // engine waits for them at load: finish_warming). Without a limit nothing
  // says they would fit in RAM (a pool may be far larger than a run's
  // experts), so slots are faulted in as reads first land in them.
  std::vector<SlotWarmer::Pool> warm;
  for (const auto& pool : pools_)
    if (pool) warm.push_back({.capacity = capacity_, .slot_bytes = pool->slot_bytes()});
  if (budget && budget->limit() != 0 && !warm.empty()) {
    warmer_ = std::make_unique<SlotWarmer>(std::move(warm), threads, budget);
    int index = 0;
    for (const auto& pool : pools_)
      if (pool) pool->take_slots_from(warmer_.get(), index++);
  }
}

ExpertStore::~ExpertStore() = default;

void ExpertStore::finish_warming() {
  if (!warmer_) return;
  const auto start = std::chrono::steady_clock::now();
  warmer_->wait_done();
  warming_wait_seconds_ += seconds_since(start);
}

ExpertStore::Held::Held(Held&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      slots_(std::move(other.slots_)),
      experts_(std::move(other.experts_)) {}

ExpertStore::Held::~Held() {
  if (!pool_) return;
  for (int slot : slots_)
    if (slot >= 0) pool_->unpin(slot);  // -1: in the pinned set
}

ExpertLayerPool& ExpertStore::pool_at(int layer) {
  if (layer < 0 || layer >= static_cast<int>(pools_.size()) || !pools_[static_cast<size_t>(layer)])
    fail("expert store: layer {} has no routed experts", layer);
  return *pools_[static_cast<size_t>(layer)];
}

uint64_t ExpertStore::slot_bytes(int layer) const {
  const auto& pool = pools_.at(static_cast<size_t>(layer));
  return pool ? pool->slot_bytes() : 0;
}

uint64_t ExpertStore::largest_slot_bytes() const {
  uint64_t bytes = 0;
  for (const auto& pool : pools_)
    if (pool) bytes = std::max(bytes, pool->slot_bytes());
  return bytes;
}

void ExpertStore::in_memory(int layer, std::span<uint8_t> in_memory) const {
  std::fill(in_memory.begin(), in_memory.end(), uint8_t{0});
  if (layer < 0 || layer >= static_cast<int>(pools_.size()) || !pools_[static_cast<size_t>(layer)])
    return;
  const ExpertLayerPool& pool = *pools_[static_cast<size_t>(layer)];
  if (static_cast<int32_t>(in_memory.size()) != pool.n_experts())
    fail("expert store: residency of {} experts asked for layer {}, which has {}", in_memory.size(),
         layer, pool.n_experts());
  for (int32_t id = 0; id < pool.n_experts(); ++id)
    in_memory[static_cast<size_t>(id)] = pool.slot_of(id) >= 0 || is_pinned(layer, id);
}

std::vector<bool> ExpertStore::expert_rows() const {
  std::vector<bool> rows;
  for (const auto& pool : pools_) rows.push_back(pool != nullptr);
  return rows;
}

const ExpertStoreStats& ExpertStore::stats() const {
  stats_.busy_seconds = io_.stats().busy_seconds;
  stats_.read_seconds = io_.stats().latency_seconds;
  stats_.step_gaps = io_.stats().step_gaps;
  stats_.idle_between_steps_seconds = io_.stats().idle_between_steps_seconds;
  stats_.slots_allocated = 0;
  stats_.fresh_slot_bytes = 0;
  for (const auto& pool : pools_)
    if (pool) {
      stats_.slots_allocated += static_cast<uint64_t>(pool->allocated());
      stats_.fresh_slot_bytes += pool->fresh_slot_bytes();
    }
  stats_.warmed_slot_bytes = warmer_ ? warmer_->warmed_bytes() : 0;
  return stats_;
}

const PinnedSummary& ExpertStore::pin(std::span<const ExpertKey> keys, bool lock) {
  return pinned_.pin(keys, lock, pools_);
}

void ExpertStore::prefetch(int layer, std::span<const int32_t> ids) {
  ExpertLayerPool& pool = pool_at(layer);
  Prediction& p = predictions_[static_cast<size_t>(layer)];
  // A second prediction before the layer runs refines the first: the
  // refined one is measured; the first apart, and the depth learns from it
  // (it decided the reads issued earliest).
  if (!p.ids.empty() && p.first_guess.empty()) {
    p.first_guess = std::move(p.ids);
    p.first_absent = std::move(p.absent);
  }
  p.ids.assign(ids.begin(), ids.end());
  p.absent = absent_now(layer, pool, ids);
  pool.predict(ids);
  read_ahead(layer, pool, ids, depth_);
}

bool ExpertStore::prefetch_next_step(int layer, std::span<const int32_t> ids) {
  ExpertLayerPool& pool = pool_at(layer);
  Prediction& p = next_step_predictions_[static_cast<size_t>(layer)];
  p.ids.assign(ids.begin(), ids.end());
  p.absent = absent_now(layer, pool, ids);
  pool.predict(ids);
  const uint64_t batches = io_.stats().batches;
  read_ahead(layer, pool, ids, next_step_depth_);
  return io_.stats().batches != batches;
}

std::vector<uint8_t> ExpertStore::absent_now(int layer, const ExpertLayerPool& pool,
                                             std::span<const int32_t> ids) const {
  std::vector<uint8_t> absent;
  absent.reserve(ids.size());
  for (int32_t id : ids)
    absent.push_back(
        id >= 0 && id < pool.n_experts() && !is_pinned(layer, id) && pool.slot_of(id) < 0 ? 1 : 0);
  return absent;
}

void ExpertStore::read_ahead(int layer, ExpertLayerPool& pool, std::span<const int32_t> ids,
                             ReadAheadDepth& depth) {
  depth.choose(static_cast<size_t>(layer), measured_costs());
  // Pinned experts are in memory for the whole run: reading one ahead into a
  // slot wastes a read and the slot. A step's few ids: the copy costs
  // nothing beside the step.
  std::vector<int32_t> ahead;
  ahead.reserve(ids.size());
  for (size_t r = 0; r < ids.size(); ++r)
    if (depth.reads(static_cast<size_t>(layer), r) && !is_pinned(layer, ids[r]))
      ahead.push_back(ids[r]);
  read_ahead_.prefetch(pool, ahead);
}

void ExpertStore::step_reads_done(bool next_step_reads_submitted) {
  // Guesses that landed unnoticed would look like reads still in flight.
  for (const auto& pool : pools_)
    if (pool) pool->reap();
  io_.step_reads_done(next_step_reads_submitted);
}

ReadAheadCosts ExpertStore::measured_costs() {
  const IoStats& drive = io_.stats();
  const auto now = std::chrono::steady_clock::now();
  if (drive_sampled_at_ != std::chrono::steady_clock::time_point{}) {
    const double wall = std::chrono::duration<double>(now - drive_sampled_at_).count();
    // A few milliseconds at least, so one sample is not all noise.
    if (wall >= 0.005) {
      const double share = busy_while_computing(drive.busy_seconds - drive_busy_at_,
                                                stats_.wait_seconds - drive_waited_at_, wall);
      if (share >= 0)
        drive_busy_share_ = drive_busy_share_ < 0 ? share : 0.9 * drive_busy_share_ + 0.1 * share;
      drive_sampled_at_ = now;
      drive_busy_at_ = drive.busy_seconds;
      drive_waited_at_ = stats_.wait_seconds;
    }
  } else {
    drive_sampled_at_ = now;
    drive_busy_at_ = drive.busy_seconds;
    drive_waited_at_ = stats_.wait_seconds;
  }
  ReadAheadCosts costs = read_ahead_costs(
      stats_, drive.busy_seconds > 0 ? static_cast<double>(drive.bytes) / drive.busy_seconds : 0.0);
  if (drive_busy_share_ >= 0) costs.drive_busy = drive_busy_share_;
  return costs;
}

void ExpertStore::settle_prediction(int layer, std::span<const int32_t> ids) {
  if (layer < 0 || layer >= static_cast<int>(predictions_.size())) return;
  // Counts a prediction's guesses and teaches `depth` (if any) from them.
  const auto settle = [&](std::span<const int32_t> guesses, std::span<const uint8_t> absent,
                          uint64_t& predicted, uint64_t& used, ReadAheadDepth* depth) {
    for (size_t r = 0; r < guesses.size(); ++r) {
      const bool hit = std::find(ids.begin(), ids.end(), guesses[r]) != ids.end();
      ++predicted;
      used += hit ? 1 : 0;
      if (depth) depth->observe(static_cast<size_t>(layer), r, absent[r] != 0, hit);
    }
  };
  Prediction& early = next_step_predictions_[static_cast<size_t>(layer)];
  settle(early.ids, early.absent, stats_.next_step_predicted, stats_.next_step_predicted_used,
         &next_step_depth_);
  early.ids.clear();
  Prediction& p = predictions_[static_cast<size_t>(layer)];
  const bool refined = !p.first_guess.empty();
  settle(p.first_guess, p.first_absent, stats_.first_guesses, stats_.first_guesses_used, &depth_);
  settle(p.ids, p.absent, stats_.predicted, stats_.predicted_used, refined ? nullptr : &depth_);
  p.first_guess.clear();
  p.ids.clear();
}

ExpertStore::Held ExpertStore::acquire(int layer, std::span<const int32_t> ids) {
  const auto in_pool =
      std::count_if(ids.begin(), ids.end(), [&](int32_t id) { return !is_pinned(layer, id); });
  if (in_pool > capacity_)
    fail("expert store: {} experts of layer {} asked for at once, but its pool holds {}",
         ids.size(), layer, capacity_);
  Held held(pool_at(layer));
  held.experts_.resize(ids.size());
  held.slots_ = run(
      layer, ids, {},
      [&](std::span<const ReadyExpert> ready) {
        for (const ReadyExpert& r : ready) held.experts_[r.index] = *r.expert;
      },
      /*keep_pins=*/true);
  return held;
}

void ExpertStore::run_step_batches(int layer, std::span<const int32_t> ids,
                                   const std::function<void()>& reads_queued,
                                   const UseExperts& use) {
  run(layer, ids, reads_queued, use, /*keep_pins=*/false);
}

std::vector<int> ExpertStore::run(int layer, std::span<const int32_t> ids,
                                  const std::function<void()>& reads_queued, const UseExperts& use,
                                  bool keep_pins) {
  ExpertLayerPool& pool = pool_at(layer);
  settle_prediction(layer, ids);
  if (!pinned_.holds_any(layer)) {
    ExpertStep step(pool, ids, keep_pins, step_lists_, stats_);
    step.run(reads_queued, use);
    return step.slots();
  }
  // Pinned experts are used first, from their own memory; the rest go
  // through the pool as a step of their own (indices mapped back).
  std::vector<int32_t> rest;
  std::vector<size_t> rest_index;
  std::vector<ReadyExpert> pinned;  // one batch: every pinned expert of the step
  for (size_t k = 0; k < ids.size(); ++k) {
    if (const Expert* expert = pinned_.find(layer, ids[k])) {
      pinned.push_back({k, expert});
      continue;
    }
    rest.push_back(ids[k]);
    rest_index.push_back(k);
  }
  ExpertStep step(pool, rest, keep_pins, step_lists_, stats_);
  stats_.pinned_hits += ids.size() - rest.size();
  if (!pinned.empty()) use(pinned);
  std::vector<ReadyExpert> mapped;
  step.run(reads_queued, [&](std::span<const ReadyExpert> ready) {
    mapped.assign(ready.begin(), ready.end());
    for (ReadyExpert& r : mapped) r.index = rest_index[r.index];
    use(mapped);
  });
  // Slots by index of `ids` (-1 for pinned experts), as callers index them.
  std::vector<int> by_rest = step.slots(), slots(ids.size(), -1);
  for (size_t j = 0; j < by_rest.size() && j < rest_index.size(); ++j)
    slots[rest_index[j]] = by_rest[j];
  return slots;
}

}  // namespace glmrt
