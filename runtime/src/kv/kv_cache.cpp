#include <glmrt/base/error.h>
#include <glmrt/kv/kv_cache.h>
#include <glmrt/kv/row_math.h>
#include <glmrt/weights/matrix.h>

#include <algorithm>
#include <cstring>

namespace glmrt {

void CacheRows::load(int64_t t, std::span<float> out) const {
  if (type == CacheType::f32) {
    std::memcpy(out.data(), static_cast<const float*>(data) + t * width, width * sizeof(float));
  } else {
    const uint16_t* row = static_cast<const uint16_t*>(data) + t * width;
    widen_bf16({row, static_cast<size_t>(width)}, out.first(width));
  }
}

float CacheRows::dot(int64_t t, std::span<const float> q) const {
  float acc = 0.f;
  const size_t n = q.size();
  if (type == CacheType::f32) {
    const float* row = static_cast<const float*>(data) + t * width;
#pragma omp simd reduction(+ : acc)
    for (size_t i = 0; i < n; ++i) acc += q[i] * row[i];
  } else {
    const uint16_t* row = static_cast<const uint16_t*>(data) + t * width;
#pragma omp simd reduction(+ : acc)
    for (size_t i = 0; i < n; ++i) acc += q[i] * bf16_to_f32(row[i]);
  }
  return acc;
}

void CacheRows::axpy(int64_t t, float a, std::span<float> acc) const {
  const size_t n = acc.size();
  if (type == CacheType::f32) {
    const float* row = static_cast<const float*>(data) + t * width;
#pragma omp simd
    for (size_t i = 0; i < n; ++i) acc[i] += a * row[i];
  } else {
    const uint16_t* row = static_cast<const uint16_t*>(data) + t * width;
#pragma omp simd
    for (size_t i = 0; i < n; ++i) acc[i] += a * bf16_to_f32(row[i]);
  }
}

KvCache::KvCache(KvCacheShape shape, CacheType type, int64_t max_tokens, MemoryBudget* budget)
    : shape_(std::move(shape)), type_(type), max_tokens_(max_tokens), budget_(budget) {
  if (static_cast<int>(shape_.has_index_keys.size()) != shape_.n_layers)
    fail("kv cache: {} index-key flags for {} layers", shape_.has_index_keys.size(),
         shape_.n_layers);
  layers_.resize(shape_.n_layers);
}

void KvCache::reserve(Layer& layer, int64_t tokens, bool with_index) {
  if (tokens <= layer.capacity) return;
  if (tokens > max_tokens_)
    fail("context full: {} tokens do not fit memory.max_context = {} of the profile", tokens,
         max_tokens_);
  // Doubling keeps appends amortised O(1) without sizing every layer for the
  // whole context up front.
  const int64_t capacity =
      std::min(max_tokens_, std::max<int64_t>(tokens, layer.capacity * 2 + 64));
  auto grow = [&](AlignedBlock& block, int64_t width) {
    AlignedBlock bigger(static_cast<size_t>(capacity * width) * element_size(), 64, budget_,
                        "kv cache");
    if (layer.length)
      std::memcpy(bigger.data(), block.data(), layer.length * width * element_size());
    block = std::move(bigger);
  };
  grow(layer.kv, shape_.kv_width);
  if (with_index) grow(layer.index_keys, shape_.index_key_width);
  layer.capacity = capacity;
}

void KvCache::append(int layer_index, int64_t S, std::span<const float> kv,
                     std::span<const float> index_keys) {
  Layer& layer = layers_.at(layer_index);
  const bool with_index = shape_.has_index_keys[layer_index];
  if (static_cast<int64_t>(kv.size()) != S * shape_.kv_width ||
      (with_index && static_cast<int64_t>(index_keys.size()) != S * shape_.index_key_width))
    fail("kv cache: layer {} append of {} rows with wrong widths", layer_index, S);
  reserve(layer, layer.length + S, with_index);
  auto store = [&](AlignedBlock& block, std::span<const float> rows, int64_t width) {
    if (type_ == CacheType::f32) {
      std::memcpy(block.as<float>().data() + layer.length * width, rows.data(), rows.size_bytes());
    } else {
      uint16_t* dst = block.as<uint16_t>().data() + layer.length * width;
      for (size_t i = 0; i < rows.size(); ++i) dst[i] = f32_to_bf16(rows[i]);
    }
  };
  store(layer.kv, kv, shape_.kv_width);
  if (with_index) store(layer.index_keys, index_keys, shape_.index_key_width);
  layer.length += S;
}

CacheRows KvCache::kv_rows(int layer) const {
  return {layers_.at(layer).kv.data(), type_, shape_.kv_width};
}

CacheRows KvCache::index_key_rows(int layer) const {
  if (!shape_.has_index_keys.at(layer)) fail("kv cache: layer {} keeps no indexer keys", layer);
  return {layers_.at(layer).index_keys.data(), type_, shape_.index_key_width};
}

void KvCache::truncate(int64_t length) {
  for (auto& layer : layers_) layer.length = std::min(layer.length, std::max<int64_t>(length, 0));
}

void KvCache::truncate_layer(int layer, int64_t length) {
  Layer& l = layers_.at(layer);
  l.length = std::min(l.length, std::max<int64_t>(length, 0));
}

std::vector<int64_t> KvCache::lengths() const {
  std::vector<int64_t> out;
  out.reserve(layers_.size());
  for (const auto& layer : layers_) out.push_back(layer.length);
  return out;
}

void KvCache::rewind(std::span<const int64_t> lengths) noexcept {
  for (size_t i = 0; i < layers_.size() && i < lengths.size(); ++i)
    layers_[i].length = std::min(layers_[i].length, std::max<int64_t>(lengths[i], 0));
}

uint64_t KvCache::bytes() const {
  uint64_t total = 0;
  for (const auto& layer : layers_) total += layer.kv.size() + layer.index_keys.size();
  return total;
}

}  // namespace glmrt
