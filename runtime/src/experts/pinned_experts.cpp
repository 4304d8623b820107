// Direct experts are submitted all at once (the io plugin reads them in
// parallel); experts that need converting go through the staging buffer one
// by one.
#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/experts/pinned_experts.h>

#include <fmt/format.h>

#include <chrono>
#include <map>

namespace glmrt {
namespace {

constexpr uint64_t kPinnedPage = 4096;

std::string pinned_read_error(int layer, int32_t id, const ReadFailure& f) {
  return fmt::format("pinning expert {} of layer {}: {}", id, layer, f.message);
}

}  // namespace

PinnedExperts::PinnedExperts(IoChannel& io, ExpertStaging& staging, MemoryBudget* budget,
                             size_t rows)
    : io_(io), staging_(staging), budget_(budget), layers_(rows) {}

const Expert* PinnedExperts::find(int layer, int32_t id) const {
  if (layer < 0 || layer >= static_cast<int>(layers_.size())) return nullptr;
  const Layer& l = layers_[static_cast<size_t>(layer)];
  if (id < 0 || id >= static_cast<int32_t>(l.index_of.size())) return nullptr;
  const int index = l.index_of[static_cast<size_t>(id)];
  return index >= 0 ? &l.experts[static_cast<size_t>(index)] : nullptr;
}

bool PinnedExperts::holds_any(int layer) const {
  return layer >= 0 && layer < static_cast<int>(layers_.size()) &&
         !layers_[static_cast<size_t>(layer)].experts.empty();
}

void PinnedExperts::pin_layer(const ExpertLayerPool& pool, std::span<const int32_t> ids,
                              uint64_t& done, ProgressBar& bar) {
  const int layer = pool.layer();
  Layer& l = layers_[static_cast<size_t>(layer)];
  const uint64_t slot = align_up(pool.slot_bytes(), kPinnedPage);
  // Pinning twice (rare) keeps the first set: its memory is in use.
  if (!l.experts.empty()) fail("expert store: layer {} is already pinned", layer);
  HugePageBlock memory(slot * ids.size(), budget_, "pinned experts");
  std::vector<Expert> experts(ids.size());
  std::vector<IoTicket> tickets(ids.size());  // after memory: they land before it goes
  std::vector<uint8_t> direct(ids.size(), 0);
  for (size_t j = 0; j < ids.size(); ++j) {
    const ExpertSlotPlan& plan = pool.plan(ids[j]);
    if (!plan.direct) continue;
    std::byte* base = memory.data() + j * slot;
    std::vector<PlannedRead> reads;
    for (const SlotRead& r : plan.reads) reads.push_back({r.file, r.span, base + r.at});
    tickets[j] = io_.submit(reads);
    direct[j] = 1;
  }
  for (size_t j = 0; j < ids.size(); ++j) {
    const int32_t id = ids[j];
    const ExpertSlotPlan& plan = pool.plan(id);
    std::byte* base = memory.data() + j * slot;
    const ExpertSite site{layer, id, &io_.files()};
    if (direct[j]) {
      if (auto failure = io_.wait(tickets[j])) fail("{}", pinned_read_error(layer, id, *failure));
      finish_direct_expert(plan, base, site);
    } else {
      IoTicket ticket = staging_.submit(io_, plan);
      if (auto failure = io_.wait(ticket)) fail("{}", pinned_read_error(layer, id, *failure));
      staging_.convert_into(plan, base, site);
    }
    experts[j] = expert_views(plan, base);
    for (const SlotRead& r : plan.reads) summary_.bytes_read += r.span.expected;
    done += plan.read_bytes;
    bar.update(done);
  }
  l.index_of.assign(static_cast<size_t>(pool.n_experts()), -1);
  for (size_t j = 0; j < ids.size(); ++j)
    l.index_of[static_cast<size_t>(ids[j])] = static_cast<int>(j);
  l.experts = std::move(experts);
  l.memory = std::move(memory);
  summary_.experts += ids.size();
  summary_.bytes += slot * ids.size();
}

const PinnedSummary& PinnedExperts::pin(std::span<const ExpertKey> keys, bool lock,
                                        std::span<const std::unique_ptr<ExpertLayerPool>> pools) {
  const auto t0 = std::chrono::steady_clock::now();
  std::map<int, std::vector<int32_t>> by_layer;
  uint64_t total = 0;
  for (const ExpertKey& k : keys) {
    const ExpertLayerPool* pool =
        k.layer >= 0 && k.layer < static_cast<int>(pools.size()) && k.layer < std::ssize(layers_)
            ? pools[static_cast<size_t>(k.layer)].get()
            : nullptr;
    if (!pool || k.expert < 0 || k.expert >= pool->n_experts())
      fail("expert store: cannot pin layer {} expert {}: no such routed expert", k.layer, k.expert);
    if (find(k.layer, k.expert)) continue;
    by_layer[k.layer].push_back(k.expert);
    total += pool->plan(k.expert).read_bytes;
  }
  if (total > 0) {
    ProgressBar bar("pinning experts", total);
    uint64_t done = 0;
    for (const auto& [layer, ids] : by_layer)
      pin_layer(*pools[static_cast<size_t>(layer)], ids, done, bar);
    bar.finish();
  }
  if (lock) {
    for (const Layer& l : layers_)
      if (l.memory.size()) locked_.lock(l.memory.data(), l.memory.size());
    summary_.locked_bytes = locked_.locked_bytes();
    summary_.lock_refusal = locked_.refusal();
  }
  summary_.seconds += seconds_since(t0);
  return summary_;
}

}  // namespace glmrt
