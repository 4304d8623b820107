// The conversations `glmrt serve` keeps cached: up to N sessions (slots),
// each the KV cache of one sequence. A request runs in the slot whose cached
// tokens share the longest prefix with its prompt when that prefix is most
// of the prompt (the next turn of a chat, the same context again), else in an
// empty slot, else in the least recently used one, so two users taking turns
// each keep their prefix; a slot a running request holds is never chosen.
// The slots share the KV memory the memory plan counts (one sequence of
// max_context tokens per sequence decoded at once, serve --parallel): before
// a request runs, the least recently used other idle slots are emptied (their
// memory freed) until the others' caches and this request's growth fit in
// it, and until the process's resident memory with that growth fits
// memory.budget.
#pragma once

#include <glmrt/engine/engine.h>
#include <glmrt/generate/session.h>
#include <glmrt/score/sequence_scorer.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace glmrt::serve {

class SessionSlots {
 public:
  /// `slots` >= 1; `engine` must outlive this. Sessions draft (as the
  /// profile says) only when `drafting`: sequences decoded together cannot.
  SessionSlots(Engine& engine, size_t slots, bool drafting = true);

  /// Chooses the slot for `prompt` (see above), which may then grow by
  /// `max_new_tokens`, and holds it for the request until release().
  size_t choose(std::span<const int32_t> prompt, int64_t max_new_tokens);
  void release(size_t index);

  Session& session(size_t index) { return *slots_[index].session; }
  SequenceScorer& scorer(size_t index) { return *slots_[index].scorer; }
  /// Totals over every slot since the start (emptied ones included).
  SessionStats stats() const;
  /// Tokens cached in all slots.
  int64_t cached_tokens() const;
  size_t size() const { return slots_.size(); }
  /// The slot choose() gave last.
  size_t last_chosen() const { return last_chosen_; }
  /// Tokens slot `index` caches.
  int64_t tokens_in(size_t index) const {
    return static_cast<int64_t>(slots_[index].session->tokens().size());
  }
  /// Slots holding a sequence now.
  size_t occupied() const;

 private:
  struct Slot {
    std::unique_ptr<Session> session;
    std::unique_ptr<SequenceScorer> scorer;
    uint64_t last_used = 0;
    bool held = false;  // a running request's
  };
  void empty(Slot& slot);
  void fill(Slot& slot);  // a new, empty session
  // Empties the least recently used other idle slots until the slot `chosen` may
  // grow to `tokens` within the plan's KV memory and the budget.
  void make_room(size_t chosen, int64_t tokens);
  // KV bytes a slot may hold for `tokens` tokens (capacity grows by doubling).
  uint64_t kv_need(int64_t tokens) const;

  Engine& engine_;
  std::vector<Slot> slots_;
  bool drafting_;
  size_t last_chosen_ = 0;
  uint64_t clock_ = 0;
  uint64_t kv_allowance_;  // what the memory plan counts for the KV caches
  SessionStats retired_;   // the stats of sessions emptied so far
};

}  // namespace glmrt::serve
