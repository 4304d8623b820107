// Bounded, thread-safe cache of BPE results per pre-token word. When full it
// is emptied and refilled: cheaper than LRU bookkeeping on every hit, and the
// words of natural text repeat enough that it refills with the hot ones.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace glmrt::text {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class WordCache {
 public:
  explicit WordCache(std::size_t capacity) : capacity_(capacity) {}

  // Appends the cached ids of `word` to `out`; false on a miss.
  bool lookup(std::string_view word, std::vector<std::uint32_t>& out) const {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(word);
    if (it == entries_.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  }

  void store(std::string_view word, std::vector<std::uint32_t> ids) const {
    std::lock_guard lock(mutex_);
    if (entries_.size() >= capacity_) entries_.clear();
    entries_.emplace(std::string(word), std::move(ids));
  }

  void clear() const {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::vector<std::uint32_t>, StringHash, std::equal_to<>>
      entries_;
};

}  // namespace glmrt::text
