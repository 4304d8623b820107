#include <glmrt/base/error.h>
#include <glmrt/experts/expert_store.h>
#include <glmrt/experts/non_finite.h>

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstring>

namespace glmrt {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string expert_name(int layer, int32_t id) {
  return fmt::format("model.layers.{}.mlp.experts.{}", layer, id);
}

// ABI 1.0's read() returns a status, no byte count. So that a plugin which
// says OK after a short read is still caught, the store writes a mark over
// the last bytes of every extent before the read and checks that the read
// overwrote it. The mark depends on the extent's offset; a checkpoint whose
// bytes there equal it by chance (odds 2^-128) would be refused.
constexpr size_t kTailMarkBytes = 16;

std::array<std::byte, kTailMarkBytes> tail_mark(uint64_t offset) {
  std::array<std::byte, kTailMarkBytes> mark;
  uint64_t state = offset ^ 0x6a09e667f3bcc908ull;
  for (size_t k = 0; k < kTailMarkBytes; k += 8) {
    // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::memcpy(mark.data() + k, &z, 8);
  }
  return mark;
}

/// The last min(length, 16) bytes of an extent's destination.
std::span<std::byte> tail_of(const glmrt_extent& e) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(e.length, kTailMarkBytes));
  return {static_cast<std::byte*>(e.destination) + e.length - n, n};
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

std::shared_ptr<const Expert> ExpertStore::convert(int layer, int32_t id,
                                                   const ExpertLayout& layout,
                                                   std::span<const std::byte> staging,
                                                   const std::string& category) const {
  static constexpr const char* kMatrices[3] = {"gate_proj", "up_proj", "down_proj"};
  auto expert = std::make_shared<Expert>();
  Matrix* targets[3] = {&expert->gate, &expert->up, &expert->down};
  std::vector<float> values;
  // Checked before conversion: a NaN would otherwise quantize to 0 or reach
  // the logits.
  auto fail_non_finite = [&](const TensorInfo& t, std::span<const std::byte> bytes, int k,
                             int64_t bad, int64_t cols) {
    const std::string at = cols > 1 ? fmt::format("row {}, column {}", bad / cols, bad % cols)
                                    : fmt::format("row {} (a scale)", bad);
    fail("expert tensor {} (layer {}, expert {}, {}) holds {} at {}, read from {} at offset {}",
         t.name, layer, id, kMatrices[k], non_finite_kind(t.dtype, bytes, bad), at,
         tensors_.files().at(t.file_index).string(), t.offset + bad * dtype_size(t.dtype));
  };
  for (int k = 0; k < 3; ++k) {
    const ExpertTensorPlace& t = layout.tensors[k];
    auto bytes = staging.subspan(layout.staging_offset(*t.values), t.values->byte_size);
    if (t.scales) {
      auto scale_bytes = staging.subspan(layout.staging_offset(*t.scales), t.scales->byte_size);
      std::vector<float> scales(t.rows);
      if (const int64_t bad = decode_finite_to_f32(DType::F32, scale_bytes, scales); bad >= 0)
        fail_non_finite(*t.scales, scale_bytes, k, bad, 1);
      *targets[k] = Matrix::from_packed(static_cast<uint32_t>(t.packed_type), bytes, scales, t.rows,
                                        t.cols, budget_, category);
    } else {
      values.resize(t.rows * t.cols);
      if (const int64_t bad = decode_finite_to_f32(t.values->dtype, bytes, values); bad >= 0)
        fail_non_finite(*t.values, bytes, k, bad, t.cols);
      *targets[k] = Matrix::from_f32(values, t.rows, t.cols, bits_, budget_, category);
    }
  }
  return expert;
}

void ExpertStore::read_batch(int layer, std::span<const int32_t> ids,
                             std::vector<AlignedBlock>& staging) {
  const uint32_t align = std::max<uint32_t>(io_.alignment(), 1);
  std::vector<glmrt_extent> extents;
  std::vector<size_t> owner;  // index into ids of each extent
  uint64_t bytes = 0;
  for (size_t j = 0; j < ids.size(); ++j) {
    const ExpertLayout& l = layouts_[layer][ids[j]];
    staging.emplace_back(l.bytes, std::max<size_t>(align, 64), budget_, "expert staging");
    uint64_t at = 0;
    for (const auto& e : l.extents) {
      extents.push_back({e.file, 0, e.offset, e.length, staging.back().data() + at});
      owner.push_back(j);
      at += e.length;
    }
    bytes += l.bytes;
  }
  auto where = [&](const glmrt_extent& e) {
    return fmt::format("{} at offset {} ({} bytes)", tensors_.files().at(e.file).string(), e.offset,
                       e.length);
  };
  for (const glmrt_extent& e : extents) {
    const auto mark = tail_mark(e.offset);
    const auto tail = tail_of(e);
    if (!tail.empty()) std::memcpy(tail.data(), mark.data(), tail.size());
  }

  const auto t0 = std::chrono::steady_clock::now();
  if (io_.read(extents.data(), static_cast<int64_t>(extents.size())) != GLMRT_OK) {
    std::string batch;
    for (size_t k = 0; k < extents.size(); ++k)
      batch += fmt::format("{}{}: {}", k ? "; " : "", expert_name(layer, ids[owner[k]]),
                           where(extents[k]));
    fail("io plugin failed reading {} routed experts of layer {}: {} [the batch: {}]", ids.size(),
         layer, io_.last_error(), batch);
  }
  stats_.read_seconds += seconds_since(t0);
  for (size_t k = 0; k < extents.size(); ++k) {
    const auto mark = tail_mark(extents[k].offset);
    const auto tail = tail_of(extents[k]);
    if (!tail.empty() && std::memcmp(tail.data(), mark.data(), tail.size()) == 0)
      fail(
          "io plugin reported success reading {} but left the end of {} unwritten: a short read "
          "it did not report",
          expert_name(layer, ids[owner[k]]), where(extents[k]));
  }
  stats_.bytes_read += bytes;
  stats_.extents_read += extents.size();
}

std::vector<std::shared_ptr<const Expert>> ExpertStore::acquire(int layer,
                                                                std::span<const int32_t> ids) {
  if (layer < 0 || layer >= static_cast<int>(layouts_.size()) || layouts_[layer].empty())
    fail("expert store: layer {} has no routed experts", layer);
  std::vector<std::shared_ptr<const Expert>> out(ids.size());
  std::vector<size_t> missing;
  std::vector<int32_t> missing_ids;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= static_cast<int32_t>(layouts_[layer].size()))
      fail("expert store: layer {} has no expert {}", layer, ids[i]);
    if (!pinned_.empty() && !pinned_[layer].empty() && pinned_[layer][ids[i]]) {
      out[i] = pinned_[layer][ids[i]];
      ++stats_.pinned_hits;
      continue;
    }
    out[i] = lookup(layer, ids[i]);
    if (out[i]) {
      ++stats_.hits;
    } else {
      missing.push_back(i);
      missing_ids.push_back(ids[i]);
    }
  }
  if (missing.empty()) return out;
  stats_.misses += missing.size();

  // One batch for every miss: the io plugin reads them in parallel. Nothing
  // is cached until every expert of the batch has been read and checked.
  std::vector<AlignedBlock> staging;
  read_batch(layer, missing_ids, staging);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<const Expert>> loaded(missing.size());
  for (size_t j = 0; j < missing.size(); ++j)
    loaded[j] = convert(layer, missing_ids[j], layouts_[layer][missing_ids[j]],
                        {staging[j].data(), staging[j].size()});
  stats_.convert_seconds += seconds_since(t0);
  for (size_t j = 0; j < missing.size(); ++j) {
    out[missing[j]] = loaded[j];
    insert(layer, missing_ids[j], loaded[j]);
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
