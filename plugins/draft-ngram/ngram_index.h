// Where each n-gram of the history last ended, for n in [min_n, max_n],
// maintained incrementally: each new history position is indexed once per n
// (amortised O(1) per token), and every change is logged so rewind() can
// restore the index as it was before any position past the rewind point was
// added. The table is open addressing over host memory; a lookup checks the
// stored occurrence token by token, so a hash collision never proposes a
// wrong continuation (it only misses a match).
#pragma once

#include "host_array.h"

#include <cstdint>

namespace glmrt::draft_ngram {

class NgramIndex {
 public:
  NgramIndex(const glmrt_host_services& host, int min_n, int max_n);

  /// Indexes the n-grams ending at positions indexed()..end-1 of `history`.
  /// False when the host refuses memory (the index stays consistent).
  bool extend(const int32_t* history, int64_t end) noexcept;
  /// Positions whose n-grams are indexed (every end before this).
  int64_t indexed() const { return indexed_; }
  /// Forgets every n-gram ending at `length` or later.
  void rewind(int64_t length) noexcept;

  /// The most recent end e < indexed() of an earlier occurrence of the n
  /// tokens ending at history[last], or -1.
  int64_t find(const int32_t* history, int64_t last, int n) const noexcept;

 private:
  struct Slot {
    uint64_t key;  // 0 = empty
    int64_t end;
  };
  struct Change {
    uint64_t key;
    int64_t previous_end;  // -1: the key was absent
    int64_t end;           // the position whose indexing made the change
  };
  static uint64_t key_of(const int32_t* history, int64_t last, int n) noexcept;
  size_t slot_of(uint64_t key) const noexcept;  // its slot, or the empty one it would take
  bool insert(uint64_t key, int64_t end) noexcept;
  void erase(uint64_t key) noexcept;
  bool grow() noexcept;

  const glmrt_host_services& host_;
  int min_n_, max_n_;
  int64_t indexed_ = 0;
  size_t used_ = 0;
  HostArray<Slot> slots_;
  HostArray<Change> log_;
};

}  // namespace glmrt::draft_ngram
