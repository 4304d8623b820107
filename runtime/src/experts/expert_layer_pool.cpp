#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/experts/expert_layer_pool.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <utility>

namespace glmrt {
namespace {

std::vector<ExpertSlotPlan> plan_layer(const std::vector<ExpertLayout>& layouts,
                                       const IoChannel& io, WeightPrecision bits) {
  std::vector<ExpertSlotPlan> plans;
  plans.reserve(layouts.size());
  for (const ExpertLayout& layout : layouts) plans.push_back(plan_expert_slot(layout, io, bits));
  return plans;
}

uint64_t largest_slot(const std::vector<ExpertSlotPlan>& plans) {
  uint64_t bytes = 0;
  for (const ExpertSlotPlan& plan : plans) bytes = std::max(bytes, plan.slot_bytes);
  return bytes;
}

}  // namespace

ExpertLayerPool::ExpertLayerPool(int layer, const std::vector<ExpertLayout>& layouts, IoChannel& io,
                                 WeightPrecision bits, int capacity, int cache_slots,
                                 MemoryBudget* budget, ExpertStaging& staging,
                                 ReadAheadStaging& ahead_staging, ExpertStoreStats& stats)
    : layer_(layer),
      cache_slots_(cache_slots),
      io_(io),
      staging_(staging),
      ahead_staging_(ahead_staging),
      stats_(stats),
      plans_(plan_layer(layouts, io, bits)),
      pool_(static_cast<int>(layouts.size()), capacity, largest_slot(plans_), budget),
      slots_(static_cast<size_t>(capacity)),
      wanted_(layouts.size(), 0),
      evicted_by_guess_(layouts.size(), 0) {
  for (const ExpertSlotPlan& plan : plans_) {
    if (plan.direct) continue;
    staging_bytes_ = std::max(staging_bytes_, plan.read_bytes);
    for (const SlotMatrix& m : plan.matrices)
      widest_converted_cols_ = std::max(widest_converted_cols_, m.cols);
  }
}

bool ExpertLayerPool::wanted_in(int slot) const {
  const int32_t held = pool_.expert_in(slot);
  return held >= 0 && wanted(held);
}

bool ExpertLayerPool::predicted(int32_t id) const {
  return std::find(predicted_.begin(), predicted_.end(), id) != predicted_.end();
}

void ExpertLayerPool::mark_used(int slot) {
  slots_[static_cast<size_t>(slot)].last_use = ++use_clock_;
}

uint64_t ExpertLayerPool::recent_use_floor() const {
  // A pool still growing (as fast as its slots are faulted in) is a smaller
  // pool with the same read-ahead part: it keeps fewer recent experts.
  const int kept_slots =
      std::min(cache_slots_, pool_.allocated() - (pool_.capacity() - cache_slots_));
  if (kept_slots <= 0) return std::numeric_limits<uint64_t>::max();
  std::vector<uint64_t> uses;
  uses.reserve(static_cast<size_t>(pool_.allocated()));
  for (int slot = 0; slot < pool_.allocated(); ++slot)
    if (const uint64_t use = slots_[static_cast<size_t>(slot)].last_use; use > 0)
      uses.push_back(use);
  if (uses.size() <= static_cast<size_t>(kept_slots)) return 1;
  const auto kept = uses.begin() + (kept_slots - 1);
  std::nth_element(uses.begin(), kept, uses.end(), std::greater<>());
  return *kept;
}

void ExpertLayerPool::reset(int slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.read_ahead) stats_.prefetch_bytes_wasted += s.ahead_bytes;
  s.state = State::empty;
  s.read_ahead = false;
  s.ahead_bytes = 0;
  if (s.staged >= 0) ahead_staging_.release(s.staged);  // its read has landed or was waited for
  s.staged = -1;
  s.settled = false;
  s.settled_failure.reset();
}

int ExpertLayerPool::claimed(int slot) {
  if (slot < 0) return slot;
  reset(slot);
  slots_[static_cast<size_t>(slot)].last_use = 0;
  evicted_by_guess_[static_cast<size_t>(pool_.expert_in(slot))] = 0;
  return slot;
}

int ExpertLayerPool::claim_idle(int32_t id) {
  const auto idle = [&](int s) {
    return slots_[static_cast<size_t>(s)].state != State::loading && !wanted_in(s);
  };
  // The LRU part's last `cache_slots` experts go last: a slot holding an
  // older one, or an unused guess, is taken first.
  const uint64_t floor = recent_use_floor();
  using Growth = ExpertSlotPool::Growth;
  int slot = pool_.claim(
      id, [&](int s) { return idle(s) && slots_[static_cast<size_t>(s)].last_use < floor; },
      Growth::warm_only);
  if (slot < 0) slot = pool_.claim(id, idle, Growth::warm_only);
  if (slot < 0) slot = pool_.claim(id, idle);  // nothing to recycle: a fresh slot
  return claimed(slot);
}

int ExpertLayerPool::claim_guess(int32_t id) {
  const uint64_t floor = recent_use_floor();
  int32_t evicted = -1;
  const int slot = pool_.claim(
      id,
      [&](int s) {
        const Slot& info = slots_[static_cast<size_t>(s)];
        const int32_t held = pool_.expert_in(s);
        if (info.state == State::loading || wanted_in(s) || info.last_use >= floor ||
            (held >= 0 && predicted(held)))
          return false;
        evicted = held;
        return true;
      },
      ExpertSlotPool::Growth::warm_only);  // a guess never maps fresh memory while slots are warmed
  if (slot >= 0 && evicted >= 0) evicted_by_guess_[static_cast<size_t>(evicted)] = 1;
  return claimed(slot);
}

int ExpertLayerPool::claim_for_step(int32_t id) {
  if (evicted_by_guess_[static_cast<size_t>(id)]) ++stats_.displaced_rereads;
  if (const int slot = claim_idle(id); slot >= 0) return slot;
  // A guess the router disproved that has not reached the drive gives up
  // its slot at once (and its drive time to the reads that are wanted).
  if (cancel_unused_guess(/*staged_only=*/false))
    if (const int slot = claim_idle(id); slot >= 0) return slot;
  // Only reads ahead still in flight are left: let the coldest one land and
  // take its slot (its read is wasted; a wrong guess costs a read).
  int32_t guess = -1;
  const int taken = pool_.claim(id, [&](int s) {
    if (slots_[static_cast<size_t>(s)].state != State::loading || wanted_in(s)) return false;
    guess = pool_.expert_in(s);
    return true;
  });
  if (taken < 0) return -1;
  if (!wait(taken) && guess >= 0) count_read(guess);  // the drive read it all the same
  return claimed(taken);
}

void ExpertLayerPool::start_read(int slot, bool read_ahead) {
  submit_reads_into(slot, pool_.memory(slot), read_ahead);
}

void ExpertLayerPool::start_staged_read(int slot, int buffer, bool read_ahead) {
  submit_reads_into(slot, ahead_staging_.data(buffer), read_ahead);
  Slot& s = slots_[static_cast<size_t>(slot)];
  s.staged = buffer;
  s.settled = false;
}

void ExpertLayerPool::submit_reads_into(int slot, std::byte* base, bool read_ahead) {
  const ExpertSlotPlan& plan = plans_[static_cast<size_t>(pool_.expert_in(slot))];
  std::vector<PlannedRead> reads;
  reads.reserve(plan.reads.size());
  for (const SlotRead& r : plan.reads) reads.push_back({r.file, r.span, base + r.at});
  Slot& s = slots_[static_cast<size_t>(slot)];
  s.ticket = io_.submit(reads, read_ahead ? ReadPriority::ahead : ReadPriority::urgent);
  if (!read_ahead && io_.prioritises()) ++stats_.urgent_reads;
  s.state = State::loading;
  s.read_ahead = read_ahead;
  s.ahead_bytes = 0;
  if (!read_ahead) return;
  for (const SlotRead& r : plan.reads) s.ahead_bytes += r.span.expected;
  stats_.prefetch_bytes += s.ahead_bytes;
}

bool ExpertLayerPool::staging_free() {
  if (ahead_staging_.has_free()) return true;
  // Every buffer holds a read: one that has landed and no step has used is
  // dropped (a wrong guess, never converted), which frees its buffer; else
  // a disproved guess the io plugin has not started is cancelled.
  const std::vector<ExpertLayerPool*> owners = ahead_staging_.owners();
  for (ExpertLayerPool* owner : owners)
    if (owner->drop_landed_staged_guess()) return true;
  for (ExpertLayerPool* owner : owners)
    if (owner->cancel_unused_guess(/*staged_only=*/true)) return true;
  return false;
}

bool ExpertLayerPool::cancel_unused_guess(bool staged_only) {
  if (!io_.prioritises()) return false;
  for (int slot = 0; slot < pool_.allocated(); ++slot) {
    const Slot& s = slots_[static_cast<size_t>(slot)];
    if (s.state != State::loading || !s.read_ahead || s.settled || (staged_only && s.staged < 0) ||
        wanted_in(slot) || predicted(pool_.expert_in(slot)))
      continue;
    if (cancel_guess(slot)) return true;
  }
  return false;
}

bool ExpertLayerPool::cancel_guess(int slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  const uint64_t saved_before = io_.stats().cancelled_bytes;
  if (io_.cancel(s.ticket) == 0) return false;  // at the drive already: left to land
  wait(slot);  // returns at once unless a part had started; the expert is incomplete either way
  const uint64_t saved = io_.stats().cancelled_bytes - saved_before;
  ++stats_.cancelled_reads;
  stats_.cancelled_bytes += saved;
  // Only what the drive did read counts as wasted.
  s.ahead_bytes -= std::min(s.ahead_bytes, saved);
  drop(slot);
  return true;
}

int ExpertLayerPool::take_staging(int slot) {
  if (!staging_free()) return -1;
  return ahead_staging_.take(*this, slot);
}

std::optional<ReadFailure> ExpertLayerPool::wait(int slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.settled) {
    s.settled = false;
    return std::exchange(s.settled_failure, std::nullopt);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ReadFailure> failure = io_.wait(s.ticket);
  stats_.wait_seconds += seconds_since(t0);
  return failure;
}

void ExpertLayerPool::finish(int slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  const int32_t id = pool_.expert_in(slot);
  const ExpertSlotPlan& plan = plans_[static_cast<size_t>(id)];
  const auto t0 = std::chrono::steady_clock::now();
  if (s.staged >= 0) {
    // Throws on a bad expert: the caller drops the slot, which frees the buffer.
    staging_.convert_from(plan, ahead_staging_.bytes(s.staged), pool_.memory(slot),
                          {layer_, id, &io_.files()});
    ahead_staging_.release(s.staged);
    s.staged = -1;
  } else {
    finish_direct_expert(plan, pool_.memory(slot), {layer_, id, &io_.files()});
  }
  s.expert = expert_views(plan, pool_.memory(slot));
  s.state = State::ready;
  stats_.convert_seconds += seconds_since(t0);
}

std::optional<ReadFailure> ExpertLayerPool::read_converted(int slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  const int32_t id = pool_.expert_in(slot);
  const ExpertSlotPlan& plan = plans_[static_cast<size_t>(id)];
  IoTicket ticket = staging_.submit(io_, plan, ReadPriority::urgent);
  if (io_.prioritises()) ++stats_.urgent_reads;
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ReadFailure> failure = io_.wait(ticket);
  stats_.wait_seconds += seconds_since(t0);
  if (failure) return failure;
  const auto t1 = std::chrono::steady_clock::now();
  staging_.convert_into(plan, pool_.memory(slot), {layer_, id, &io_.files()});
  s.expert = expert_views(plan, pool_.memory(slot));
  s.state = State::ready;
  stats_.convert_seconds += seconds_since(t1);
  return std::nullopt;
}

void ExpertLayerPool::drop(int slot) {
  slots_[static_cast<size_t>(slot)].ticket = IoTicket();  // a read still in flight lands first
  reset(slot);
  pool_.forget(slot);
}

void ExpertLayerPool::reap() {
  for (int slot = 0; slot < pool_.allocated(); ++slot) {
    Slot& s = slots_[static_cast<size_t>(slot)];
    if (s.state != State::loading || !s.read_ahead || s.settled || !io_.poll(s.ticket)) continue;
    if (s.staged >= 0) {
      // A guess that needs converting waits for a step to use it (a wrong
      // one is never converted: drop_landed_staged_guess frees its buffer),
      // but its read is over: settling it ends the drive's busy time now,
      // not when a step gets to it (the busy share and the drive's rate
      // that reading ahead is priced by would count that wait as reading).
      s.settled_failure = io_.wait(s.ticket);
      s.settled = true;
      continue;
    }
    if (wait(slot)) {
      drop(slot);  // a failed guess: the step reads it again if it needs it
      continue;
    }
    count_read(pool_.expert_in(slot));
    const auto t0 = std::chrono::steady_clock::now();
    try {
      finish(slot);
    } catch (const Error&) {
      drop(slot);  // the step that needs it reads it again and reports
    }
    stats_.ahead_finish_seconds += seconds_since(t0);
    ++stats_.ahead_finished;
  }
}

bool ExpertLayerPool::drop_landed_staged_guess() {
  for (int slot = 0; slot < pool_.allocated(); ++slot) {
    Slot& s = slots_[static_cast<size_t>(slot)];
    if (s.staged < 0 || s.state != State::loading || !s.read_ahead || wanted_in(slot) ||
        predicted(pool_.expert_in(slot)) || !landed(slot))
      continue;
    if (!wait(slot)) count_read(pool_.expert_in(slot));
    drop(slot);  // unused so far: its read is wasted, its buffer free
    return true;
  }
  return false;
}

void ExpertLayerPool::count_read(int32_t id) {
  const ExpertSlotPlan& plan = plans_[static_cast<size_t>(id)];
  stats_.extents_read += plan.reads.size();
  for (const SlotRead& r : plan.reads) stats_.bytes_read += r.span.expected;
}

}  // namespace glmrt
