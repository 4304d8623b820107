// The expert store's slots: planning every expert's reads once, claiming
// slots, reading into them (directly, or through the staging buffer when
// the checkpoint needs converting) and reading ahead. The step loop is in
// expert_step.cpp.
#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/experts/expert_store.h>
#include <glmrt/profile/byte_size.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace glmrt {
namespace {

constexpr uint64_t kPage = 4096;

}  // namespace

ExpertStore::ExpertStore(std::vector<std::vector<ExpertLayout>> layouts, IoChannel& io,
                         WeightPrecision bits, ExpertPoolSizes sizes, MemoryBudget* budget, int threads)
    : layouts_(std::move(layouts)),
      io_(io),
      bits_(bits),
      sizes_(sizes),
      capacity_(std::max(1, sizes.cache + sizes.prefetch)),
      budget_(budget),
      threads_(std::max(1, threads)) {
  if (sizes.cache < 0 || sizes.prefetch < 0)
    fail("expert store: cache {} and prefetch {} slots must not be negative", sizes.cache,
         sizes.prefetch);
  layers_.resize(layouts_.size());
  uint64_t staging = 0, pools = 0, largest_slot = 0;
  int64_t widest = 0;
  int moe_layers = 0;
  for (size_t i = 0; i < layouts_.size(); ++i) {
    if (layouts_[i].empty()) continue;
    Layer& l = layers_[i];
    uint64_t slot_bytes = 0;
    l.plans.reserve(layouts_[i].size());
    for (const ExpertLayout& layout : layouts_[i]) {
      ExpertSlotPlan plan = plan_expert_slot(layout, io_, bits_);
      slot_bytes = std::max(slot_bytes, plan.slot_bytes);
      if (!plan.direct) {
        staging = std::max(staging, plan.read_bytes);
        for (const SlotMatrix& m : plan.matrices) widest = std::max(widest, m.cols);
      }
      l.plans.push_back(std::move(plan));
    }
    const int n_experts = static_cast<int>(layouts_[i].size());
    l.pool = std::make_unique<ExpertSlotPool>(n_experts, capacity_, slot_bytes, budget_);
    l.slots.resize(static_cast<size_t>(capacity_));
    l.wanted.assign(static_cast<size_t>(n_experts), 0);
    pools += static_cast<uint64_t>(capacity_) * align_up(slot_bytes, kPage);
    largest_slot = std::max(largest_slot, slot_bytes);
    ++moe_layers;
  }
  const uint64_t scratch = static_cast<uint64_t>(threads_) * static_cast<uint64_t>(widest) * 4;
  if (budget_ && budget_->limit() != 0 &&
      budget_->used() + pools + align_up(staging, kPage) + scratch > budget_->limit())
    fail(
        "memory budget {} cannot hold the expert slots: the resident part already uses {}, and "
        "{} MoE layers x {} slots (memory.expert_cache {} + memory.prefetch {}) x {} per slot "
        "need {} more{}; lower memory.expert_cache or memory.prefetch, or raise memory.budget",
        format_byte_size(budget_->limit()), format_byte_size(budget_->used()), moe_layers,
        capacity_, sizes_.cache, sizes_.prefetch, format_byte_size(align_up(largest_slot, kPage)),
        format_byte_size(pools),
        staging ? fmt::format(" (+ {} staging for conversion)", format_byte_size(staging)) : "");
  if (staging) {
    staging_ = HugePageBlock(staging, budget_, "expert staging");
    row_scratch_ = AlignedBlock(scratch, 64, budget_, "expert staging");
  }
}

ExpertStore::~ExpertStore() = default;

ExpertStore::Held::Held(Held&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)),
      layer_(other.layer_),
      slots_(std::move(other.slots_)),
      experts_(std::move(other.experts_)) {}

ExpertStore::Held::~Held() {
  if (!store_) return;
  for (int slot : slots_)
    if (slot >= 0) store_->layers_[static_cast<size_t>(layer_)].pool->unpin(slot);  // -1: pinned
}

ExpertStore::Layer& ExpertStore::layer_at(int layer) {
  if (layer < 0 || layer >= static_cast<int>(layers_.size()) || !layers_[layer].pool)
    fail("expert store: layer {} has no routed experts", layer);
  return layers_[static_cast<size_t>(layer)];
}

uint64_t ExpertStore::slot_bytes(int layer) const {
  const Layer& l = layers_.at(static_cast<size_t>(layer));
  return l.pool ? l.pool->slot_bytes() : 0;
}

uint64_t ExpertStore::largest_slot_bytes() const {
  uint64_t bytes = 0;
  for (const Layer& l : layers_)
    if (l.pool) bytes = std::max(bytes, l.pool->slot_bytes());
  return bytes;
}

uint64_t ExpertStore::full_pool_bytes() const {
  uint64_t bytes = staging_.size() + row_scratch_.size();
  for (const Layer& l : layers_)
    if (l.pool) bytes += static_cast<uint64_t>(capacity_) * align_up(l.pool->slot_bytes(), kPage);
  return bytes;
}

const ExpertStoreStats& ExpertStore::stats() const {
  stats_.busy_seconds = io_.stats().busy_seconds;
  stats_.read_seconds = io_.stats().latency_seconds;
  stats_.slots_allocated = 0;
  for (const Layer& l : layers_)
    if (l.pool) stats_.slots_allocated += static_cast<uint64_t>(l.pool->allocated());
  return stats_;
}

int ExpertStore::claim_slot(Layer& l, int32_t id) {
  auto not_wanted = [&](int slot) {
    const int32_t held = l.pool->expert_in(slot);
    return held < 0 || !l.wanted[static_cast<size_t>(held)];
  };
  const int slot = l.pool->claim(id, [&](int s) {
    return l.slots[static_cast<size_t>(s)].state != SlotState::loading && not_wanted(s);
  });
  if (slot >= 0) {
    SlotInfo& info = l.slots[static_cast<size_t>(slot)];
    info.state = SlotState::empty;
    info.read_ahead = false;
    return slot;
  }
  // Only reads ahead still in flight are left: let the coldest one land and
  // take its slot (its read is wasted; a wrong guess costs a read).
  const int taken = l.pool->claim(id, [&](int s) {
    return l.slots[static_cast<size_t>(s)].state == SlotState::loading && not_wanted(s);
  });
  if (taken < 0) return -1;
  SlotInfo& info = l.slots[static_cast<size_t>(taken)];
  const auto t0 = std::chrono::steady_clock::now();
  info.ticket = IoTicket();  // waits for the read to finish before the slot is reused
  stats_.wait_seconds += seconds_since(t0);
  info.state = SlotState::empty;
  info.read_ahead = false;
  return taken;
}

IoTicket ExpertStore::submit_direct(Layer& l, int slot, const ExpertSlotPlan& plan) {
  std::byte* base = l.pool->memory(slot);
  std::vector<PlannedRead> reads;
  reads.reserve(plan.reads.size());
  for (const SlotRead& r : plan.reads) reads.push_back({r.file, r.span, base + r.at});
  return io_.submit(reads);
}

std::optional<ReadFailure> ExpertStore::wait_slot(Layer& l, int slot) {
  SlotInfo& info = l.slots[static_cast<size_t>(slot)];
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ReadFailure> failure = io_.wait(info.ticket);
  stats_.wait_seconds += seconds_since(t0);
  return failure;
}

void ExpertStore::finish_slot(Layer& l, int layer, int slot) {
  SlotInfo& info = l.slots[static_cast<size_t>(slot)];
  const int32_t id = l.pool->expert_in(slot);
  const ExpertSlotPlan& plan = l.plans[static_cast<size_t>(id)];
  const auto t0 = std::chrono::steady_clock::now();
  finish_direct_expert(plan, l.pool->memory(slot), {layer, id, &io_.files()});
  info.expert = expert_views(plan, l.pool->memory(slot));
  info.state = SlotState::ready;
  stats_.convert_seconds += seconds_since(t0);
}

std::optional<ReadFailure> ExpertStore::read_converted(Layer& l, int layer, int slot) {
  SlotInfo& info = l.slots[static_cast<size_t>(slot)];
  const int32_t id = l.pool->expert_in(slot);
  const ExpertSlotPlan& plan = l.plans[static_cast<size_t>(id)];
  std::vector<PlannedRead> reads;
  reads.reserve(plan.reads.size());
  for (const SlotRead& r : plan.reads) reads.push_back({r.file, r.span, staging_.data() + r.at});
  IoTicket ticket = io_.submit(reads);
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ReadFailure> failure = io_.wait(ticket);
  stats_.wait_seconds += seconds_since(t0);
  if (failure) return failure;
  const auto t1 = std::chrono::steady_clock::now();
  convert_expert(plan, {staging_.data(), staging_.size()}, l.pool->memory(slot),
                 row_scratch_.as<float>(), threads_, {layer, id, &io_.files()});
  info.expert = expert_views(plan, l.pool->memory(slot));
  info.state = SlotState::ready;
  stats_.convert_seconds += seconds_since(t1);
  return std::nullopt;
}

void ExpertStore::drop_slot(Layer& l, int slot) {
  SlotInfo& info = l.slots[static_cast<size_t>(slot)];
  info.ticket = IoTicket();  // a read still in flight lands first
  info.state = SlotState::empty;
  info.read_ahead = false;
  l.pool->forget(slot);
}

void ExpertStore::reap(Layer& l, int layer) {
  for (int slot = 0; slot < l.pool->allocated(); ++slot) {
    SlotInfo& info = l.slots[static_cast<size_t>(slot)];
    if (info.state != SlotState::loading || !info.read_ahead || !io_.poll(info.ticket)) continue;
    if (wait_slot(l, slot)) {
      drop_slot(l, slot);  // a failed guess: the step reads it again if it needs it
      continue;
    }
    count_read(l.plans[static_cast<size_t>(l.pool->expert_in(slot))]);
    try {
      finish_slot(l, layer, slot);
    } catch (const Error&) {
      drop_slot(l, slot);  // the step that needs it reads it again and reports
    }
  }
}

void ExpertStore::count_read(const ExpertSlotPlan& plan) {
  stats_.extents_read += plan.reads.size();
  for (const SlotRead& r : plan.reads) stats_.bytes_read += r.span.expected;
}

void ExpertStore::prefetch(int layer, std::span<const int32_t> ids) {
  Layer& l = layer_at(layer);
  l.predicted.assign(ids.begin(), ids.end());
  if (sizes_.prefetch <= 0) return;
  reap(l, layer);
  int issued = 0;
  std::vector<PlannedRead> hints;
  for (int32_t id : ids) {
    if (issued >= sizes_.prefetch) break;
    if (id < 0 || id >= static_cast<int32_t>(l.plans.size())) continue;
    if (const int present = l.pool->slot_of(id); present >= 0) {
      l.pool->touch(present);  // keep it for the step that is coming
      continue;
    }
    const ExpertSlotPlan& plan = l.plans[static_cast<size_t>(id)];
    if (!plan.direct || !io_.asynchronous()) {
      // Cannot be read ahead into a slot (staging is one buffer; a 1.0
      // plugin reads only when asked): let the plugin warm its cache.
      for (const SlotRead& r : plan.reads) hints.push_back({r.file, r.span, nullptr});
      ++issued;
      continue;
    }
    int slot = -1;
    try {
      slot = l.pool->claim(id, [&](int s) {
        const int32_t held = l.pool->expert_in(s);
        return l.slots[static_cast<size_t>(s)].state != SlotState::loading &&
               (held < 0 || !l.wanted[static_cast<size_t>(held)]);
      });
    } catch (const Error&) {
      break;  // no memory for another slot now: reading ahead is only ever a guess
    }
    if (slot < 0) break;
    SlotInfo& info = l.slots[static_cast<size_t>(slot)];
    info.ticket = submit_direct(l, slot, plan);
    info.state = SlotState::loading;
    info.read_ahead = true;
    ++issued;
    ++stats_.prefetch_reads;
  }
  if (!hints.empty()) io_.hint(hints);
}

ExpertStore::Held ExpertStore::acquire(int layer, std::span<const int32_t> ids) {
  const auto in_pool =
      std::count_if(ids.begin(), ids.end(), [&](int32_t id) { return !is_pinned(layer, id); });
  if (in_pool > capacity_)
    fail("expert store: {} experts of layer {} asked for at once, but its pool holds {}",
         ids.size(), layer, capacity_);
  Held held(*this, layer);
  held.experts_.resize(ids.size());
  std::vector<int> slots = run(
      layer, ids, {},
      [&](std::span<const ReadyExpert> ready) {
        for (const ReadyExpert& r : ready) held.experts_[r.index] = *r.expert;
      },
      /*keep_pins=*/true);
  held.slots_ = std::move(slots);
  return held;
}

void ExpertStore::run_step(int layer, std::span<const int32_t> ids,
                           const std::function<void()>& reads_queued, const UseExpert& use) {
  run(
      layer, ids, reads_queued,
      [&](std::span<const ReadyExpert> ready) {
        for (const ReadyExpert& r : ready) use(r.index, *r.expert);
      },
      /*keep_pins=*/false);
}

void ExpertStore::run_step_batches(int layer, std::span<const int32_t> ids,
                                   const std::function<void()>& reads_queued,
                                   const UseExperts& use) {
  run(layer, ids, reads_queued, use, /*keep_pins=*/false);
}

}  // namespace glmrt
