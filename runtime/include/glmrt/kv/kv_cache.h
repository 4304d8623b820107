// The caches of one sequence: per layer, the latent KV row of every past token
// ([kv_lora normed latent | roped k_rope], never expanded K/V) and, for layers
// with a full DSA indexer, the indexer's key. Stored as f32 or bf16 (profile),
// grown on demand up to max_context, truncatable to any earlier length
// (speculative rollback, chat prefix reuse, /reset).
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/base/weight_precision.h>

#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

/// A read view of consecutive cached rows of one layer.
struct CacheRows {
  const void* data = nullptr;
  CacheType type = CacheType::f32;
  int64_t width = 0;  // values per token
  /// Token t's row, as f32 into `out` (width values).
  void load(int64_t t, std::span<float> out) const;
  /// dot(q, row t) over the first q.size() values.
  float dot(int64_t t, std::span<const float> q) const;
  /// acc += a * row t over the first acc.size() values.
  void axpy(int64_t t, float a, std::span<float> acc) const;
};

struct KvCacheShape {
  int n_layers = 0;                  // main layers + MTP layers
  int kv_width = 0;                  // kv_lora_rank + qk_rope_head_dim
  int index_key_width = 0;           // index_head_dim
  std::vector<bool> has_index_keys;  // per layer
};

class KvCache {
 public:
  KvCache(KvCacheShape shape, CacheType type, int64_t max_tokens, MemoryBudget* budget);

  int64_t length(int layer) const { return layers_.at(layer).length; }
  int64_t max_tokens() const { return max_tokens_; }
  CacheType type() const { return type_; }

  /// Appends S rows to a layer (kv: [S, kv_width]; index_keys: [S, index_key_width] or empty).
  void append(int layer, int64_t S, std::span<const float> kv, std::span<const float> index_keys);
  CacheRows kv_rows(int layer) const;
  CacheRows index_key_rows(int layer) const;

  /// Every layer keeps at most `length` tokens.
  void truncate(int64_t length);
  /// One layer keeps at most `length` tokens (the MTP layer's rows trail the
  /// main layers' by one: its row t needs token t + 1).
  void truncate_layer(int layer, int64_t length);
  /// Each layer's length, to rewind() to.
  std::vector<int64_t> lengths() const;
  /// Each layer keeps at most the length `lengths` (from lengths()) gives it.
  void rewind(std::span<const int64_t> lengths) noexcept;
  uint64_t bytes() const;

 private:
  struct Layer {
    AlignedBlock kv, index_keys;
    int64_t length = 0, capacity = 0;
  };
  void reserve(Layer& layer, int64_t tokens, bool with_index);
  size_t element_size() const { return type_ == CacheType::f32 ? 4 : 2; }

  KvCacheShape shape_;
  CacheType type_;
  int64_t max_tokens_;
  MemoryBudget* budget_;
  std::vector<Layer> layers_;
};

/// Makes a step on a cache all or nothing: unless commit() is called, the
/// destructor rewinds every layer to the length it had at construction, so a
/// forward pass that throws (a failed expert read, say) leaves the sequence as
/// it was and the same step can run again.
class KvRollback {
 public:
  explicit KvRollback(KvCache& cache) : cache_(cache), lengths_(cache.lengths()) {}
  KvRollback(const KvRollback&) = delete;
  KvRollback& operator=(const KvRollback&) = delete;
  ~KvRollback() {
    if (!committed_) cache_.rewind(lengths_);
  }
  void commit() { committed_ = true; }

 private:
  KvCache& cache_;
  std::vector<int64_t> lengths_;
  bool committed_ = false;
};

}  // namespace glmrt
