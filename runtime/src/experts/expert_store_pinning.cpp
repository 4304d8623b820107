// The expert store's pinned set: the most used experts, read once when the
// engine opens into memory of their own (one huge-page block per layer, a
// slot's size per expert), checked like any step's experts, kept for the
// store's life and optionally locked in RAM. Direct experts are submitted all
// at once (the io plugin reads them in parallel); experts that need
// converting go through the staging buffer one by one.
#include <glmrt/base/error.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/experts/expert_store.h>

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

bool ExpertStore::is_pinned(int layer, int32_t id) const {
  if (layer < 0 || layer >= static_cast<int>(layers_.size())) return false;
  const Layer& l = layers_[static_cast<size_t>(layer)];
  return id >= 0 && id < static_cast<int32_t>(l.pinned_of.size()) &&
         l.pinned_of[static_cast<size_t>(id)] >= 0;
}

std::vector<bool> ExpertStore::expert_rows() const {
  std::vector<bool> rows;
  for (const Layer& l : layers_) rows.push_back(l.pool != nullptr);
  return rows;
}

void ExpertStore::pin_layer(int layer, std::span<const int32_t> ids, uint64_t& done,
                            ProgressBar& bar) {
  Layer& l = layer_at(layer);
  const uint64_t slot = align_up(l.pool->slot_bytes(), kPinnedPage);
  // Pinning twice (rare) keeps the first set: its memory is in use.
  if (!l.pinned.empty()) fail("expert store: layer {} is already pinned", layer);
  HugePageBlock memory(slot * ids.size(), budget_, "pinned experts");
  std::vector<Expert> experts(ids.size());
  std::vector<IoTicket> tickets(ids.size());
  std::vector<uint8_t> direct(ids.size(), 0);
  for (size_t j = 0; j < ids.size(); ++j) {
    const ExpertSlotPlan& plan = l.plans[static_cast<size_t>(ids[j])];
    if (!plan.direct) continue;
    std::byte* base = memory.data() + j * slot;
    std::vector<PlannedRead> reads;
    for (const SlotRead& r : plan.reads) reads.push_back({r.file, r.span, base + r.at});
    tickets[j] = io_.submit(reads);
    direct[j] = 1;
  }
  for (size_t j = 0; j < ids.size(); ++j) {
    const int32_t id = ids[j];
    const ExpertSlotPlan& plan = l.plans[static_cast<size_t>(id)];
    std::byte* base = memory.data() + j * slot;
    if (direct[j]) {
      if (auto failure = io_.wait(tickets[j])) fail("{}", pinned_read_error(layer, id, *failure));
      finish_direct_expert(plan, base, {layer, id, &io_.files()});
    } else {
      std::vector<PlannedRead> reads;
      for (const SlotRead& r : plan.reads)
        reads.push_back({r.file, r.span, staging_.data() + r.at});
      IoTicket ticket = io_.submit(reads);
      if (auto failure = io_.wait(ticket)) fail("{}", pinned_read_error(layer, id, *failure));
      convert_expert(plan, {staging_.data(), staging_.size()}, base, row_scratch_.as<float>(),
                     threads_, {layer, id, &io_.files()});
    }
    experts[j] = expert_views(plan, base);
    for (const SlotRead& r : plan.reads) pinned_summary_.bytes_read += r.span.expected;
    done += plan.read_bytes;
    bar.update(done);
  }
  l.pinned_of.assign(l.plans.size(), -1);
  for (size_t j = 0; j < ids.size(); ++j)
    l.pinned_of[static_cast<size_t>(ids[j])] = static_cast<int>(j);
  l.pinned = std::move(experts);
  l.pinned_memory = std::move(memory);
  pinned_summary_.experts += ids.size();
  pinned_summary_.bytes += slot * ids.size();
}

const PinnedSummary& ExpertStore::pin(std::span<const ExpertKey> keys, bool lock) {
  const auto t0 = std::chrono::steady_clock::now();
  std::map<int, std::vector<int32_t>> by_layer;
  uint64_t total = 0;
  for (const ExpertKey& k : keys) {
    if (k.layer < 0 || k.layer >= static_cast<int>(layers_.size()) ||
        !layers_[static_cast<size_t>(k.layer)].pool || k.expert < 0 ||
        k.expert >= static_cast<int>(layers_[static_cast<size_t>(k.layer)].plans.size()))
      fail("expert store: cannot pin layer {} expert {}: no such routed expert", k.layer, k.expert);
    if (is_pinned(k.layer, k.expert)) continue;
    by_layer[k.layer].push_back(k.expert);
    total += layers_[static_cast<size_t>(k.layer)].plans[static_cast<size_t>(k.expert)].read_bytes;
  }
  if (total > 0) {
    ProgressBar bar("pinning experts", total);
    uint64_t done = 0;
    for (const auto& [layer, ids] : by_layer) pin_layer(layer, ids, done, bar);
    bar.finish();
  }
  if (lock) {
    for (const Layer& l : layers_)
      if (l.pinned_memory.size()) locked_.lock(l.pinned_memory.data(), l.pinned_memory.size());
    pinned_summary_.locked_bytes = locked_.locked_bytes();
    pinned_summary_.lock_refusal = locked_.refusal();
  }
  pinned_summary_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return pinned_summary_;
}

}  // namespace glmrt
