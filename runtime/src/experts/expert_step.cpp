// One step of an MoE layer through its slot pool: present experts first,
// misses submitted as slots free up, each expert handed to the caller as soon
// as it has landed. All or nothing: a step that fails leaves nothing it read
// in the pool.
#include <glmrt/base/error.h>
#include <glmrt/experts/expert_store.h>

#include <fmt/format.h>

#include <algorithm>

namespace glmrt {

class ExpertStore::Step {
 public:
  Step(ExpertStore& store, int layer, std::span<const int32_t> ids, bool keep_pins)
      : store_(store),
        l_(store.layer_at(layer)),
        layer_(layer),
        ids_(ids),
        keep_pins_(keep_pins),
        slot_(store.step_lists_.slot),
        pinned_(store.step_lists_.pinned),
        misses_(store.step_lists_.misses),
        todo_(store.step_lists_.todo),
        ready_(store.step_lists_.ready),
        ready_head_(store.step_lists_.ready_head),
        loading_(store.step_lists_.loading),
        filled_(store.step_lists_.filled),
        ahead_(store.step_lists_.ahead),
        batch_(store.step_lists_.batch) {
    for (auto* list : {&misses_, &todo_, &ready_, &loading_}) list->clear();
    filled_.clear();
    ahead_.clear();
    ready_head_ = 0;
    const int32_t n_experts = static_cast<int32_t>(l_.plans.size());
    for (int32_t id : ids_)
      if (id < 0 || id >= n_experts) fail("expert store: layer {} has no expert {}", layer, id);
    store_.reap(l_, layer_);
    for (int32_t id : ids_) l_.wanted[static_cast<size_t>(id)] = 1;
    marked_ = true;
    ExpertStoreStats& stats = store_.stats_;
    if (!l_.predicted.empty()) {
      stats.predicted += l_.predicted.size();
      for (int32_t p : l_.predicted)
        if (p >= 0 && p < n_experts && l_.wanted[static_cast<size_t>(p)]) ++stats.predicted_used;
      l_.predicted.clear();
    }
    slot_.assign(ids_.size(), -1);
    pinned_.assign(ids_.size(), 0);
    for (size_t k = 0; k < ids_.size(); ++k) {
      const int slot = l_.pool->slot_of(ids_[k]);
      if (slot < 0) {
        misses_.push_back(k);
        todo_.push_back(k);
        continue;
      }
      ++stats.hits;
      pin(k, slot);
      l_.pool->touch(slot);
      SlotInfo& info = l_.slots[static_cast<size_t>(slot)];
      if (info.read_ahead) {
        ++stats.prefetch_reads_used;
        info.read_ahead = false;
        ahead_.push_back(slot);
      }
      if (info.state == SlotState::ready)
        ready_.push_back(k);
      else
        loading_.push_back(k);
    }
    stats.misses += misses_.size();
    if (static_cast<int>(ids_.size()) > l_.pool->capacity()) ++stats.streamed_steps;
  }

  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  /// Undoes a step that did not finish: reads in flight land, every slot
  /// the step read into forgets its expert, pins and marks go.
  ~Step() {
    if (!finished_) {
      for (size_t k : loading_) drop(slot_[k]);
      for (int slot : filled_) drop(slot);
    }
    for (size_t k = 0; k < ids_.size(); ++k)
      if (pinned_[k] && !(finished_ && keep_pins_)) l_.pool->unpin(slot_[k]);
    if (marked_)
      for (int32_t id : ids_) l_.wanted[static_cast<size_t>(id)] = 0;
  }

  void run(const std::function<void()>& reads_queued, const UseExperts& use) {
    submit_more();
    if (reads_queued) reads_queued();
    size_t used = 0;
    while (used < ids_.size()) {
      if (ready_head_ < ready_.size()) {
        const size_t end = ready_.size();
        batch_.clear();
        for (size_t i = ready_head_; i < end; ++i)
          batch_.push_back({ready_[i], &l_.slots[static_cast<size_t>(slot_[ready_[i]])].expert});
        use(batch_);
        for (; ready_head_ < end; ++ready_head_) {
          const size_t k = ready_[ready_head_];
          l_.wanted[static_cast<size_t>(ids_[k])] = 0;
          if (!keep_pins_) unpin(k);
          ++used;
        }
        submit_more();
      } else if (!loading_.empty()) {
        land(next_arrival());
      } else if (!todo_.empty()) {
        convert_next();
      } else {
        fail("expert store: layer {} step stalled with {} of {} experts used", layer_, used,
             ids_.size());
      }
    }
    for (size_t k : misses_) store_.count_read(l_.plans[static_cast<size_t>(ids_[k])]);
    finished_ = true;
  }

  std::vector<int> slots() const { return slot_; }

 private:
  void pin(size_t k, int slot) {
    slot_[k] = slot;
    l_.pool->pin(slot);
    pinned_[k] = 1;
  }
  void unpin(size_t k) {
    l_.pool->unpin(slot_[k]);
    pinned_[k] = 0;
  }
  void drop(int slot) {
    if (slot >= 0 && l_.pool->expert_in(slot) >= 0) store_.drop_slot(l_, slot);
  }

  /// Gives every miss that can be read straight into a slot one, in
  /// ascending order, as long as slots are free.
  void submit_more() {
    for (auto it = todo_.begin(); it != todo_.end();) {
      const size_t k = *it;
      const ExpertSlotPlan& plan = l_.plans[static_cast<size_t>(ids_[k])];
      if (!plan.direct) {
        ++it;  // through the staging buffer, one at a time: convert_next()
        continue;
      }
      const int slot = store_.claim_slot(l_, ids_[k]);
      if (slot < 0) break;
      pin(k, slot);
      filled_.push_back(slot);
      SlotInfo& info = l_.slots[static_cast<size_t>(slot)];
      info.ticket = store_.submit_direct(l_, slot, plan);
      info.state = SlotState::loading;
      loading_.push_back(k);
      it = todo_.erase(it);
    }
  }

  /// The position in loading_ of a read that has landed, or of the oldest.
  size_t next_arrival() {
    for (size_t i = 0; i < loading_.size(); ++i)
      if (store_.io_.poll(l_.slots[static_cast<size_t>(slot_[loading_[i]])].ticket)) return i;
    return 0;
  }

  void land(size_t position) {
    const size_t k = loading_[position];
    loading_.erase(loading_.begin() + static_cast<std::ptrdiff_t>(position));
    const int slot = slot_[k];
    const bool read_ahead = std::find(ahead_.begin(), ahead_.end(), slot) != ahead_.end();
    if (std::optional<ReadFailure> failure = store_.wait_slot(l_, slot)) {
      if (read_ahead) {
        // A read ahead that failed costs a read, not the step: read it again.
        unpin(k);
        store_.drop_slot(l_, slot);
        slot_[k] = -1;
        todo_.insert(std::upper_bound(todo_.begin(), todo_.end(), k), k);
        misses_.push_back(k);
        ++store_.stats_.misses;
        --store_.stats_.hits;
        submit_more();
        return;
      }
      fail_read(*failure, k);
    }
    if (read_ahead) store_.count_read(l_.plans[static_cast<size_t>(ids_[k])]);
    try {
      store_.finish_slot(l_, layer_, slot);
    } catch (const Error&) {
      drop(slot);
      throw;
    }
    ready_.push_back(k);
  }

  /// The next expert that needs converting, read through the staging buffer.
  void convert_next() {
    const size_t k = todo_.front();
    const int slot = store_.claim_slot(l_, ids_[k]);
    if (slot < 0)
      fail("expert store: every slot of layer {} is held elsewhere; expert {} has none", layer_,
           ids_[k]);
    todo_.erase(todo_.begin());
    pin(k, slot);
    filled_.push_back(slot);
    if (std::optional<ReadFailure> failure = store_.read_converted(l_, layer_, slot))
      fail_read(*failure, k);
    ready_.push_back(k);
  }

  [[noreturn]] void fail_read(const ReadFailure& failure, size_t failed) const {
    const auto& files = store_.io_.files();
    std::string batch;
    for (size_t k : misses_) {
      const ExpertLayout& layout = *l_.plans[static_cast<size_t>(ids_[k])].layout;
      for (const ExpertExtent& e : layout.extents)
        batch += fmt::format("{}model.layers.{}.mlp.experts.{}: {} at offset {} ({} bytes)",
                             batch.empty() ? "" : "; ", layer_, ids_[k], files.at(e.file).string(),
                             e.offset, e.length);
    }
    fail(
        "io plugin failed reading {} routed experts of layer {} (model.layers.{}.mlp.experts.{} "
        "among them): {} [the batch: {}]",
        misses_.size(), layer_, layer_, ids_[failed], failure.message, batch);
  }

  ExpertStore& store_;
  Layer& l_;
  int layer_;
  std::span<const int32_t> ids_;
  bool keep_pins_;
  bool marked_ = false, finished_ = false;
  // The store's StepLists (see there), reused from step to step.
  std::vector<int>& slot_;
  std::vector<uint8_t>& pinned_;
  std::vector<size_t>& misses_;
  std::vector<size_t>& todo_;
  std::vector<size_t>& ready_;
  size_t& ready_head_;
  std::vector<size_t>& loading_;
  std::vector<int>& filled_;
  std::vector<int>& ahead_;
  std::vector<ReadyExpert>& batch_;
};

std::vector<int> ExpertStore::run(int layer, std::span<const int32_t> ids,
                                  const std::function<void()>& reads_queued, const UseExperts& use,
                                  bool keep_pins) {
  Layer& l = layer_at(layer);
  if (l.pinned.empty()) {
    Step step(*this, layer, ids, keep_pins);
    step.run(reads_queued, use);
    return step.slots();
  }
  // Pinned experts are used first, from their own memory; the rest go
  // through the pool as a step of their own (indices mapped back).
  std::vector<int32_t> rest;
  std::vector<size_t> rest_index;
  for (size_t k = 0; k < ids.size(); ++k) {
    const int32_t id = ids[k];
    if (id >= 0 && id < static_cast<int32_t>(l.pinned_of.size()) &&
        l.pinned_of[static_cast<size_t>(id)] >= 0)
      continue;
    rest.push_back(id);
    rest_index.push_back(k);
  }
  Step step(*this, layer, rest, keep_pins);
  stats_.pinned_hits += ids.size() - rest.size();
  std::vector<ReadyExpert> pinned;  // one batch: every pinned expert of the step
  for (size_t k = 0; k < ids.size(); ++k) {
    const int32_t id = ids[k];
    if (id >= 0 && id < static_cast<int32_t>(l.pinned_of.size()) &&
        l.pinned_of[static_cast<size_t>(id)] >= 0)
      pinned.push_back({k, &l.pinned[static_cast<size_t>(l.pinned_of[static_cast<size_t>(id)])]});
  }
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
