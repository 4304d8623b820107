#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/memory/memory_estimates.h>
#include <glmrt/serve/session_slots.h>

#include <algorithm>
#include <cstdint>

namespace glmrt::serve {
namespace {

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const auto [stop, unused] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<size_t>(stop - a.begin());
}

SessionStats plus(SessionStats a, const SessionStats& b) {
  a.prefilled_tokens += b.prefilled_tokens;
  a.reused_tokens += b.reused_tokens;
  a.decoded_tokens += b.decoded_tokens;
  a.prefill_seconds += b.prefill_seconds;
  a.decode_seconds += b.decode_seconds;
  return a;
}

// What a request allocates besides its KV cache while it runs (its parsed
// JSON and text, the sampler's buffers, stack pages of the thread serving
// it), which current_rss_bytes() cannot see coming: slots kept up to the
// budget's last byte took the server's peak 124 KiB past it (tests/memory,
// under load). Kept free, twice that.
constexpr uint64_t kRequestHeadroom = 256 << 10;

}  // namespace

SessionSlots::SessionSlots(Engine& engine, size_t slots, bool drafting)
    : engine_(engine),
      slots_(slots),
      drafting_(drafting),
      kv_allowance_(kv_cache_bytes(engine.profile(), engine.model().config()) *
                    static_cast<uint64_t>(std::max(engine.memory_plan().kv_sequences, 1))) {
  if (slots < 1) fail("--slots must be >= 1");
  for (Slot& slot : slots_) fill(slot);
}

void SessionSlots::fill(Slot& slot) {
  slot.scorer.reset();  // it refers to the session
  slot.session = drafting_ ? std::make_unique<Session>(engine_)
                           : std::make_unique<Session>(engine_, std::nullopt);
  slot.scorer = std::make_unique<SequenceScorer>(*slot.session);
}

uint64_t SessionSlots::kv_need(int64_t tokens) const {
  const int64_t max_context = std::max<int64_t>(1, engine_.profile().max_context);
  const int64_t capacity = std::min(max_context, 2 * tokens + 64);
  return kv_allowance_ / static_cast<uint64_t>(max_context) * static_cast<uint64_t>(capacity);
}

void SessionSlots::empty(Slot& slot) {
  retired_ = plus(retired_, slot.session->stats());
  fill(slot);
}

size_t SessionSlots::choose(std::span<const int32_t> prompt, int64_t max_new_tokens) {
  constexpr size_t none = SIZE_MAX;
  size_t best = none, best_common = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].held) continue;
    const size_t common = common_prefix(slots_[i].session->tokens(), prompt);
    if (best == none || common > best_common) best = i, best_common = common;
  }
  if (best == none)
    fail(
        "every one of the {} conversation slots is held by a running request (--slots must be "
        "at least --parallel)",
        slots_.size());
  const auto& best_tokens = slots_[best].session->tokens();
  // The slot's sequence continues (a chat's next turn), or most of the prompt
  // is cached there (the same context again): run there. Otherwise do not
  // spoil another conversation's cache while an empty slot or an older one
  // can take the request.
  size_t chosen = best;
  if (best_common == 0 || (best_common < best_tokens.size() && 2 * best_common < prompt.size())) {
    chosen = none;
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].held) continue;
      if (chosen == none) {
        chosen = i;
        continue;
      }
      const bool empty_i = slots_[i].session->tokens().empty();
      const bool empty_chosen = slots_[chosen].session->tokens().empty();
      if ((empty_i && !empty_chosen) ||
          (empty_i == empty_chosen && slots_[i].last_used < slots_[chosen].last_used))
        chosen = i;
    }
  }
  slots_[chosen].last_used = ++clock_;
  slots_[chosen].held = true;
  last_chosen_ = chosen;

  make_room(chosen, static_cast<int64_t>(prompt.size()) + std::max<int64_t>(0, max_new_tokens));
  return chosen;
}

void SessionSlots::release(size_t index) {
  slots_[index].held = false;
}

void SessionSlots::make_room(size_t chosen, int64_t tokens) {
  const uint64_t need = kv_need(tokens);
  // A cache grows by doubling: for a moment it holds its old rows and the
  // new, larger block.
  const uint64_t growth_peak = need + need / 2;
  const uint64_t held = slots_[chosen].session->cache_bytes();
  const uint64_t budget = engine_.budget().limit();
  for (;;) {
    uint64_t others = 0;
    Slot* oldest = nullptr;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const uint64_t bytes = slots_[i].session->cache_bytes();
      if (i == chosen || bytes == 0) continue;
      others += bytes;
      if (slots_[i].held) continue;  // its request is running: it cannot go
      if (!oldest || slots_[i].last_used < oldest->last_used) oldest = &slots_[i];
    }
    if (!oldest) break;
    // The slots share one sequence's KV memory in the plan; and the process
    // as it is (what the plan cannot see: freed blocks the allocator keeps,
    // the server's own buffers) plus this request's growth stays within the
    // budget, or kept prefixes go, oldest first. Measured, because 256 slots
    // at the plan's minimum went 4 MiB past it counting caches alone.
    const bool kv_fits = others + need <= kv_allowance_;
    const bool process_fits =
        budget == 0 ||
        current_rss_bytes() + (growth_peak > held ? growth_peak - held : 0) + kRequestHeadroom <=
            budget;
    if (kv_fits && process_fits) break;
    empty(*oldest);
  }
}

SessionStats SessionSlots::stats() const {
  SessionStats total = retired_;
  for (const Slot& slot : slots_) total = plus(total, slot.session->stats());
  return total;
}

int64_t SessionSlots::cached_tokens() const {
  int64_t total = 0;
  for (const Slot& slot : slots_) total += static_cast<int64_t>(slot.session->tokens().size());
  return total;
}

size_t SessionSlots::occupied() const {
  return static_cast<size_t>(std::count_if(
      slots_.begin(), slots_.end(), [](const Slot& s) { return !s.session->tokens().empty(); }));
}

}  // namespace glmrt::serve
