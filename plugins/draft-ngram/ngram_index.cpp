#include "ngram_index.h"

#include <algorithm>

namespace glmrt::draft_ngram {
namespace {

constexpr size_t kFirstCapacity = 1024;  // slots; a power of two

uint64_t mix(uint64_t h) {  // the splitmix64 finaliser
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

}  // namespace

NgramIndex::NgramIndex(const glmrt_host_services& host, int min_n, int max_n)
    : host_(host), min_n_(std::max(min_n, 1)), max_n_(max_n), slots_(host), log_(host) {}

uint64_t NgramIndex::key_of(const int32_t* history, int64_t last, int n) noexcept {
  uint64_t h = mix(static_cast<uint64_t>(n));
  for (int64_t i = last - n + 1; i <= last; ++i) h = mix(h ^ static_cast<uint32_t>(history[i]));
  return h ? h : 1;  // 0 marks an empty slot
}

size_t NgramIndex::slot_of(uint64_t key) const noexcept {
  const size_t mask = slots_.size() - 1;
  size_t i = key & mask;
  while (slots_[i].key != 0 && slots_[i].key != key) i = (i + 1) & mask;
  return i;
}

bool NgramIndex::grow() noexcept {
  const size_t capacity = slots_.empty() ? kFirstCapacity : 2 * slots_.size();
  HostArray<Slot> old(host_);
  if (!old.assign(capacity, Slot{0, 0})) return false;
  slots_.swap(old);  // slots_ is now the empty, larger table
  used_ = 0;
  for (size_t i = 0; i < old.size(); ++i)
    if (old[i].key != 0) {
      slots_[slot_of(old[i].key)] = old[i];
      ++used_;
    }
  return true;
}

bool NgramIndex::insert(uint64_t key, int64_t end) noexcept {
  if ((used_ + 1) * 2 > slots_.size() && !grow()) return false;
  const size_t i = slot_of(key);
  if (slots_[i].key == 0) ++used_;
  slots_[i] = {key, end};
  return true;
}

void NgramIndex::erase(uint64_t key) noexcept {
  // Backward-shift deletion keeps every other key reachable from its home.
  const size_t mask = slots_.size() - 1;
  size_t hole = slot_of(key);
  if (slots_[hole].key == 0) return;
  --used_;
  for (size_t next = (hole + 1) & mask; slots_[next].key != 0; next = (next + 1) & mask) {
    const size_t home = slots_[next].key & mask;
    // Move `next` into the hole unless its home lies cyclically in (hole, next].
    const bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
    if (!stays) {
      slots_[hole] = slots_[next];
      hole = next;
    }
  }
  slots_[hole] = {0, 0};
}

bool NgramIndex::extend(const int32_t* history, int64_t end) noexcept {
  for (; indexed_ < end; ++indexed_) {
    const int64_t last = indexed_;
    for (int n = min_n_; n <= max_n_ && n <= last + 1; ++n) {
      const uint64_t key = key_of(history, last, n);
      int64_t previous = -1;
      if (!slots_.empty()) {
        const Slot& slot = slots_[slot_of(key)];
        if (slot.key == key) previous = slot.end;
      }
      if (!log_.push_back({key, previous, last})) return false;
      if (!insert(key, last)) {
        log_.pop_back();
        return false;
      }
    }
  }
  return true;
}

void NgramIndex::rewind(int64_t length) noexcept {
  while (!log_.empty() && log_.back().end >= length) {
    const Change& c = log_.back();
    if (c.previous_end < 0)
      erase(c.key);
    else
      slots_[slot_of(c.key)].end = c.previous_end;
    log_.pop_back();
  }
  indexed_ = std::min(indexed_, std::max<int64_t>(length, 0));
}

int64_t NgramIndex::find(const int32_t* history, int64_t last, int n) const noexcept {
  if (slots_.empty() || n < min_n_ || n > max_n_ || last + 1 < n) return -1;
  const Slot& slot = slots_[slot_of(key_of(history, last, n))];
  if (slot.key == 0) return -1;
  const int64_t e = slot.end;
  if (e >= indexed_ || e >= last || e + 1 < n) return -1;
  for (int i = 0; i < n; ++i)
    if (history[e - i] != history[last - i]) return -1;  // a hash collision
  return e;
}

}  // namespace glmrt::draft_ngram
