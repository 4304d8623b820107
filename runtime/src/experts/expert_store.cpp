#include <glmrt/base/error.h>
#include <glmrt/experts/expert_store.h>

#include <chrono>

namespace glmrt {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ExpertStore::ExpertStore(std::vector<std::vector<ExpertLayout>> layouts,
                         const TensorDirectory& tensors, plugin::Io& io, WeightBits bits,
                         int cache_per_layer, MemoryBudget* budget)
    : layouts_(std::move(layouts)),
      tensors_(tensors),
      io_(io),
      bits_(bits),
      capacity_(cache_per_layer),
      budget_(budget),
      lru_(layouts_.size()) {
  std::vector<std::string> paths;
  for (const auto& f : tensors_.files()) paths.push_back(f.string());
  std::vector<const char*> c_paths;
  for (const auto& p : paths) c_paths.push_back(p.c_str());
  if (io_.open_files(c_paths.data(), static_cast<int32_t>(c_paths.size())) != GLMRT_OK)
    fail("io plugin could not open the model's safetensors files: {}", io_.last_error());
}

std::shared_ptr<const Expert> ExpertStore::lookup(int layer, int32_t id) {
  auto& list = lru_[layer];
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (it->id == id) {
      list.splice(list.begin(), list, it);
      return list.front().expert;
    }
  }
  return nullptr;
}

void ExpertStore::insert(int layer, int32_t id, std::shared_ptr<const Expert> expert) {
  if (capacity_ <= 0) return;
  auto& list = lru_[layer];
  list.push_front({id, std::move(expert)});
  while (static_cast<int>(list.size()) > capacity_) list.pop_back();
}

std::shared_ptr<const Expert> ExpertStore::convert(const ExpertLayout& layout,
                                                   std::span<const std::byte> staging) const {
  auto expert = std::make_shared<Expert>();
  Matrix* targets[3] = {&expert->gate, &expert->up, &expert->down};
  std::vector<float> values;
  for (int k = 0; k < 3; ++k) {
    const ExpertTensorPlace& t = layout.tensors[k];
    auto bytes = staging.subspan(layout.staging_offset(*t.values), t.values->byte_size);
    if (t.scales) {
      auto scale_bytes = staging.subspan(layout.staging_offset(*t.scales), t.scales->byte_size);
      std::vector<float> scales(t.rows);
      decode_to_f32(DType::F32, scale_bytes, scales);
      *targets[k] = Matrix::from_packed(static_cast<uint32_t>(t.packed_type), bytes, scales, t.rows,
                                        t.cols, budget_, "expert cache");
    } else {
      values.resize(t.rows * t.cols);
      decode_to_f32(t.values->dtype, bytes, values);
      *targets[k] = Matrix::from_f32(values, t.rows, t.cols, bits_, budget_, "expert cache");
    }
  }
  return expert;
}

std::vector<std::shared_ptr<const Expert>> ExpertStore::acquire(int layer,
                                                                std::span<const int32_t> ids) {
  if (layer < 0 || layer >= static_cast<int>(layouts_.size()) || layouts_[layer].empty())
    fail("expert store: layer {} has no routed experts", layer);
  std::vector<std::shared_ptr<const Expert>> out(ids.size());
  std::vector<size_t> missing;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= static_cast<int32_t>(layouts_[layer].size()))
      fail("expert store: layer {} has no expert {}", layer, ids[i]);
    out[i] = lookup(layer, ids[i]);
    if (out[i])
      ++stats_.hits;
    else
      missing.push_back(i);
  }
  if (missing.empty()) return out;
  stats_.misses += missing.size();

  // One batch for every miss: the io plugin reads them in parallel.
  const uint32_t align = std::max<uint32_t>(io_.alignment(), 1);
  std::vector<AlignedBlock> staging;
  std::vector<glmrt_extent> extents;
  for (size_t i : missing) {
    const ExpertLayout& l = layouts_[layer][ids[i]];
    staging.emplace_back(l.bytes, std::max<size_t>(align, 64), budget_, "expert staging");
    uint64_t at = 0;
    for (const auto& e : l.extents) {
      extents.push_back({e.file, 0, e.offset, e.length, staging.back().data() + at});
      at += e.length;
    }
    stats_.bytes_read += l.bytes;
  }
  auto t0 = std::chrono::steady_clock::now();
  if (io_.read(extents.data(), static_cast<int64_t>(extents.size())) != GLMRT_OK)
    fail("io plugin failed reading {} experts of layer {}: {}", missing.size(), layer,
         io_.last_error());
  stats_.read_seconds += seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<const Expert>> loaded(missing.size());
  for (size_t j = 0; j < missing.size(); ++j)
    loaded[j] = convert(layouts_[layer][ids[missing[j]]], {staging[j].data(), staging[j].size()});
  stats_.convert_seconds += seconds_since(t0);
  for (size_t j = 0; j < missing.size(); ++j) {
    out[missing[j]] = loaded[j];
    insert(layer, ids[missing[j]], loaded[j]);
  }
  return out;
}

void ExpertStore::prefetch(int layer, std::span<const int32_t> ids) {
  std::vector<glmrt_extent> extents;
  for (int32_t id : ids)
    for (const auto& e : layouts_.at(layer).at(id).extents)
      extents.push_back({e.file, 0, e.offset, e.length, nullptr});
  io_.prefetch(extents.data(), static_cast<int64_t>(extents.size()));
}

}  // namespace glmrt
