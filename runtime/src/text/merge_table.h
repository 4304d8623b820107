// The BPE merge ranks as a flat open-addressing hash table: the lookup of
// (left id, right id) pairs is the hot loop of cold encoding, and a node-based
// std::unordered_map with 150k entries spends it in cache misses.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace glmrt::text {

class MergeTable {
 public:
  struct Merge {
    std::uint32_t rank;
    std::uint32_t result;
  };

  explicit MergeTable(std::size_t expected = 0) { rehash(expected); }

  // Inserts or replaces the merge of (left, right).
  void insert_or_assign(std::uint32_t left, std::uint32_t right, Merge merge) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size());
    Slot& slot = find_slot(key_of(left, right));
    if (!slot.used) ++size_;
    slot = {key_of(left, right), merge, true};
  }

  std::optional<Merge> find(std::uint32_t left, std::uint32_t right) const {
    const std::uint64_t key = key_of(left, right);
    for (std::size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (!slot.used) return std::nullopt;
      if (slot.key == key) return slot.merge;
    }
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Merge merge{};
    bool used = false;
  };

  static std::uint64_t key_of(std::uint32_t left, std::uint32_t right) {
    return (static_cast<std::uint64_t>(left) << 32) | right;
  }
  static std::size_t mix(std::uint64_t key) {  // splitmix64 finaliser
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    return static_cast<std::size_t>(key ^ (key >> 31));
  }

  Slot& find_slot(std::uint64_t key) {
    for (std::size_t i = mix(key) & mask_;; i = (i + 1) & mask_)
      if (!slots_[i].used || slots_[i].key == key) return slots_[i];
  }

  // Grows to a power of two holding at least twice `entries` slots.
  void rehash(std::size_t entries) {
    std::size_t capacity = 16;
    while (capacity < entries * 2) capacity *= 2;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (!s.used) continue;
      find_slot(s.key) = s;
      ++size_;
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace glmrt::text
