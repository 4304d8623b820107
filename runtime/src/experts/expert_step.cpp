#include <glmrt/base/error.h>
#include <glmrt/experts/expert_step.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace glmrt {

using State = ExpertLayerPool::State;

ExpertStep::ExpertStep(ExpertLayerPool& pool, std::span<const int32_t> ids, bool keep_pins,
                       ExpertStepLists& lists, ExpertStoreStats& stats)
    : pool_(pool),
      stats_(stats),
      layer_(pool.layer()),
      ids_(ids),
      keep_pins_(keep_pins),
      slot_(lists.slot),
      pinned_(lists.pinned),
      misses_(lists.misses),
      todo_(lists.todo),
      ready_(lists.ready),
      ready_head_(lists.ready_head),
      loading_(lists.loading),
      filled_(lists.filled),
      ahead_(lists.ahead),
      batch_(lists.batch) {
  for (auto* list : {&misses_, &todo_, &ready_, &loading_}) list->clear();
  filled_.clear();
  ahead_.clear();
  ready_head_ = 0;
  for (int32_t id : ids_)
    if (id < 0 || id >= pool_.n_experts())
      fail("expert store: layer {} has no expert {}", layer_, id);
  pool_.reap();
  for (int32_t id : ids_) pool_.want(id, true);
  marked_ = true;
  pool_.forget_prediction();
  slot_.assign(ids_.size(), -1);
  pinned_.assign(ids_.size(), 0);
  for (size_t k = 0; k < ids_.size(); ++k) {
    const int slot = pool_.slot_of(ids_[k]);
    if (slot < 0) {
      misses_.push_back(k);
      todo_.push_back(k);
      continue;
    }
    ++stats_.hits;
    pin(k, slot);
    pool_.touch(slot);
    ExpertLayerPool::Slot& info = pool_.slot(slot);
    if (info.read_ahead) {
      ++stats_.prefetch_reads_used;
      // One waiting in a staging buffer has landed if its read has.
      if (info.state != State::ready && !pool_.landed(slot)) ++stats_.prefetch_reads_late;
      info.read_ahead = false;
      ahead_.push_back(slot);
    }
    if (info.state == State::ready)
      ready_.push_back(k);
    else
      loading_.push_back(k);
  }
  stats_.misses += misses_.size();
  if (static_cast<int>(ids_.size()) > pool_.capacity()) ++stats_.streamed_steps;
}

ExpertStep::~ExpertStep() {
  if (!finished_) {
    for (size_t k : loading_) drop(slot_[k]);
    for (int slot : filled_) drop(slot);
  }
  for (size_t k = 0; k < ids_.size(); ++k)
    if (pinned_[k] && !(finished_ && keep_pins_)) pool_.unpin(slot_[k]);
  if (marked_)
    for (int32_t id : ids_) pool_.want(id, false);
}

void ExpertStep::run(const std::function<void()>& reads_queued, const UseExperts& use) {
  submit_more();
  // The experts in memory are used while the misses' reads are in flight,
  // before `reads_queued`: the next layer's prediction then sees their output.
  size_t used = use_ready(use);
  if (reads_queued) reads_queued();
  while (used < ids_.size()) {
    if (ready_head_ < ready_.size()) {
      used += use_ready(use);
    } else if (!loading_.empty()) {
      land(next_arrival());
    } else if (!todo_.empty()) {
      convert_next();
    } else {
      fail("expert store: layer {} step stalled with {} of {} experts used", layer_, used,
           ids_.size());
    }
  }
  for (size_t k : misses_) pool_.count_read(ids_[k]);
  finished_ = true;
}

size_t ExpertStep::use_ready(const UseExperts& use) {
  if (ready_head_ >= ready_.size()) return 0;
  const size_t end = ready_.size();
  batch_.clear();
  for (size_t i = ready_head_; i < end; ++i)
    batch_.push_back({ready_[i], &pool_.slot(slot_[ready_[i]]).expert});
  use(batch_);
  const size_t used = end - ready_head_;
  for (; ready_head_ < end; ++ready_head_) {
    const size_t k = ready_[ready_head_];
    pool_.want(ids_[k], false);
    if (!keep_pins_) unpin(k);
  }
  submit_more();
  return used;
}

void ExpertStep::pin(size_t k, int slot) {
  slot_[k] = slot;
  pool_.pin(slot);
  pool_.mark_used(slot);
  pinned_[k] = 1;
}

void ExpertStep::unpin(size_t k) {
  pool_.unpin(slot_[k]);
  pinned_[k] = 0;
}

void ExpertStep::drop(int slot) {
  if (slot >= 0 && pool_.expert_in(slot) >= 0) pool_.drop(slot);
}

void ExpertStep::submit_more() {
  for (auto it = todo_.begin(); it != todo_.end();) {
    const size_t k = *it;
    const bool direct = pool_.plan(ids_[k]).direct;
    // One that needs converting is read into a free read-ahead staging
    // buffer and converted when it lands, so a step's misses are read side
    // by side and queued before the next layer's reads ahead (which run()
    // submits after this); without a free buffer it goes through the
    // staging buffer, one at a time: convert_next().
    if (!direct && !pool_.staging_free()) {
      ++it;
      continue;
    }
    const int slot = pool_.claim_for_step(ids_[k]);
    if (slot < 0) break;
    pin(k, slot);
    filled_.push_back(slot);
    if (direct) {
      pool_.start_read(slot, /*read_ahead=*/false);
    } else {
      const int buffer = pool_.take_staging(slot);
      if (buffer < 0) fail("expert store: layer {}: a free staging buffer went missing", layer_);
      pool_.start_staged_read(slot, buffer, /*read_ahead=*/false);
    }
    loading_.push_back(k);
    it = todo_.erase(it);
  }
}

size_t ExpertStep::next_arrival() {
  for (size_t i = 0; i < loading_.size(); ++i)
    if (pool_.landed(slot_[loading_[i]])) return i;
  return 0;
}

void ExpertStep::land(size_t position) {
  const size_t k = loading_[position];
  loading_.erase(loading_.begin() + static_cast<std::ptrdiff_t>(position));
  const int slot = slot_[k];
  const bool read_ahead = std::find(ahead_.begin(), ahead_.end(), slot) != ahead_.end();
  if (std::optional<ReadFailure> failure = pool_.wait(slot)) {
    if (read_ahead) {
      // A read ahead that failed costs a read, not the step: read it again.
      unpin(k);
      pool_.drop(slot);
      slot_[k] = -1;
      todo_.insert(std::upper_bound(todo_.begin(), todo_.end(), k), k);
      misses_.push_back(k);
      ++stats_.misses;
      --stats_.hits;
      submit_more();
      return;
    }
    fail_read(*failure, k);
  }
  if (read_ahead) pool_.count_read(ids_[k]);
  try {
    pool_.finish(slot);
  } catch (const Error&) {
    drop(slot);
    throw;
  }
  ready_.push_back(k);
}

void ExpertStep::convert_next() {
  const size_t k = todo_.front();
  const int slot = pool_.claim_for_step(ids_[k]);
  if (slot < 0)
    fail("expert store: every slot of layer {} is held elsewhere; expert {} has none", layer_,
         ids_[k]);
  todo_.erase(todo_.begin());
  pin(k, slot);
  filled_.push_back(slot);
  if (std::optional<ReadFailure> failure = pool_.read_converted(slot)) fail_read(*failure, k);
  ready_.push_back(k);
}

void ExpertStep::fail_read(const ReadFailure& failure, size_t failed) const {
  const auto& files = pool_.files();
  std::string batch;
  for (size_t k : misses_) {
    const ExpertLayout& layout = *pool_.plan(ids_[k]).layout;
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

}  // namespace glmrt
