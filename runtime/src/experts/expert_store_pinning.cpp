// The expert store's pinned set: the most used experts, read and converted
// once when the engine opens (one batched read per layer, conversions in
// parallel), kept for the store's life, optionally locked in RAM.
#include <glmrt/base/error.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/experts/expert_store.h>

#include <omp.h>

#include <chrono>
#include <map>

namespace glmrt {

bool ExpertStore::is_pinned(int layer, int32_t id) const {
  return layer >= 0 && layer < static_cast<int>(pinned_.size()) && !pinned_[layer].empty() &&
         id >= 0 && id < static_cast<int32_t>(pinned_[layer].size()) && pinned_[layer][id];
}

std::vector<bool> ExpertStore::expert_rows() const {
  std::vector<bool> rows;
  for (const auto& layer : layouts_) rows.push_back(!layer.empty());
  return rows;
}

int ExpertStore::experts_per_layer() const {
  for (const auto& layer : layouts_)
    if (!layer.empty()) return static_cast<int>(layer.size());
  return 0;
}

void ExpertStore::pin_layer(int layer, std::span<const int32_t> ids, uint64_t& done,
                            ProgressBar& bar) {
  // Reads count in the pinned summary, not in the steps' statistics.
  const ExpertStoreStats before = stats_;
  std::vector<AlignedBlock> staging;
  read_batch(layer, ids, staging);
  pinned_summary_.bytes_read += stats_.bytes_read - before.bytes_read;
  stats_ = before;

  std::vector<std::shared_ptr<const Expert>> loaded(ids.size());
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t j = 0; j < ids.size(); ++j) {
    try {
      loaded[j] = convert(layer, ids[j], layouts_[layer][ids[j]],
                          {staging[j].data(), staging[j].size()}, "pinned experts");
    } catch (...) {
#pragma omp critical
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  auto& row = pinned_[layer];
  if (row.empty()) row.resize(layouts_[layer].size());
  for (size_t j = 0; j < ids.size(); ++j) {
    row[ids[j]] = loaded[j];
    pinned_summary_.bytes += loaded[j]->bytes();
    done += layouts_[layer][ids[j]].bytes;
  }
  pinned_summary_.experts += ids.size();
  bar.update(done);
}

const PinnedSummary& ExpertStore::pin(std::span<const ExpertKey> keys, bool lock) {
  const auto t0 = std::chrono::steady_clock::now();
  if (pinned_.empty()) pinned_.resize(layouts_.size());
  std::map<int, std::vector<int32_t>> by_layer;
  uint64_t total = 0;
  for (const ExpertKey& k : keys) {
    if (k.layer < 0 || k.layer >= static_cast<int>(layouts_.size()) || layouts_[k.layer].empty() ||
        k.expert < 0 || k.expert >= static_cast<int>(layouts_[k.layer].size()))
      fail("expert store: cannot pin layer {} expert {}: no such routed expert", k.layer, k.expert);
    if (is_pinned(k.layer, k.expert)) continue;
    by_layer[k.layer].push_back(k.expert);
    total += layouts_[k.layer][k.expert].bytes;
  }
  if (total > 0) {
    ProgressBar bar("pinning experts", total);
    uint64_t done = 0;
    for (const auto& [layer, ids] : by_layer) pin_layer(layer, ids, done, bar);
    bar.finish();
  }
  if (lock) {
    for (const auto& row : pinned_)
      for (const auto& expert : row) {
        if (!expert) continue;
        for (const Matrix* m : {&expert->gate, &expert->up, &expert->down}) {
          const glmrt_weight_view v = m->view();
          locked_.lock(v.data, static_cast<size_t>(v.rows * v.row_stride_bytes));
          if (v.scales) locked_.lock(v.scales, static_cast<size_t>(v.rows) * sizeof(float));
        }
      }
    pinned_summary_.locked_bytes = locked_.locked_bytes();
    pinned_summary_.lock_refusal = locked_.refusal();
  }
  pinned_summary_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return pinned_summary_;
}

}  // namespace glmrt
