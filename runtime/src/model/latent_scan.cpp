// The absorbed form's scan over cached latent rows: rows are widened to f32 a
// tile at a time, scored against every head and folded into the weighted sum
// with an online softmax, so each row is read once per step.
#include <glmrt/kv/row_math.h>
#include <glmrt/model/mla_core.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace glmrt {
namespace {

// 16 rows of 576 f32 (36 KB) stay in L1/L2 while all heads use them.
constexpr int64_t kTileKeys = 16;
// Below this many keys per thread the fork/join costs more than it saves.
constexpr int64_t kMinKeysPerThread = 4 * kTileKeys;
constexpr float kNoScoreYet = -std::numeric_limits<float>::infinity();

using Thread = LatentScratch::Thread;

void reset(Thread& t) {
  std::fill(t.acc.begin(), t.acc.end(), 0.f);
  std::fill(t.max.begin(), t.max.end(), kNoScoreYet);
  std::fill(t.sum.begin(), t.sum.end(), 0.f);
}

// Folds keys [begin, end) of one query into t's running (max, sum, acc).
void scan_keys(const MlaDims& d, std::span<const float> q_cat, const CacheRows& rows,
               QueryKeys keys, int64_t begin, int64_t end, Thread& t) {
  const int64_t W = d.cache_width(), L = d.kv_lora, H = d.heads;
  const float scale = d.score_scale();
  for (int64_t b = begin; b < end; b += kTileKeys) {
    const int64_t n = std::min(kTileKeys, end - b);
    for (int64_t i = 0; i < n; ++i) rows.load(keys.at(b + i), std::span(t.tile).subspan(i * W, W));
    const RowBlock tile{t.tile.data(), n, W};
    scaled_dots({q_cat.data(), H, W}, tile, W, scale, t.scores, kTileKeys);
    for (int64_t h = 0; h < H; ++h) {
      float* s = t.scores.data() + h * kTileKeys;
      const std::span<float> acc(t.acc.data() + h * L, L);
      const float tile_max = *std::max_element(s, s + n);
      if (tile_max > t.max[h]) {
        if (t.max[h] != kNoScoreYet) {
          const float rescale = std::exp(t.max[h] - tile_max);
          t.sum[h] *= rescale;
          for (float& a : acc) a *= rescale;
        }
        t.max[h] = tile_max;
      }
      float tile_sum = 0.f;
      for (int64_t i = 0; i < n; ++i) tile_sum += (s[i] = std::exp(s[i] - t.max[h]));
      t.sum[h] += tile_sum;
      weighted_row_sum({s, static_cast<size_t>(n)}, tile, acc);
    }
  }
}

// ctx[h] = Σ_p e^(max_p - M) acc_p / Σ_p e^(max_p - M) sum_p over the partial scans p.
void merge(const MlaDims& d, std::span<const Thread> parts, std::span<float> ctx) {
  const int64_t L = d.kv_lora;
  for (int64_t h = 0; h < d.heads; ++h) {
    float top = kNoScoreYet;
    for (const Thread& p : parts) top = std::max(top, p.max[h]);
    const std::span<float> out = ctx.subspan(h * L, L);
    std::fill(out.begin(), out.end(), 0.f);
    float denominator = 0.f;
    for (const Thread& p : parts) {
      if (p.max[h] == kNoScoreYet) continue;  // this part saw no keys
      const float weight = std::exp(p.max[h] - top);
      denominator += weight * p.sum[h];
      axpy(weight, {p.acc.data() + h * L, static_cast<size_t>(L)}, out);
    }
    const float inv = 1.f / denominator;
    for (float& v : out) v *= inv;
  }
}

}  // namespace

std::span<Thread> LatentScratch::prepare(const MlaDims& d, int threads) {
  if (static_cast<int>(threads_.size()) < threads) threads_.resize(threads);
  for (Thread& t : threads_) {
    t.tile.resize(kTileKeys * d.cache_width());
    t.scores.resize(kTileKeys * d.heads);
    t.acc.resize(d.heads * d.kv_lora);
    t.max.resize(d.heads);
    t.sum.resize(d.heads);
  }
  return std::span(threads_).first(threads);
}

// How many parts one query's n keys are split into: a function of n and the
// thread budget alone, never of the other queries of the step, so a query
// gives the same bits alone (decode) or among others (verifying drafts).
namespace {
int latent_parts(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>(n / kMinKeysPerThread, 1, omp_get_max_threads()));
}
}  // namespace

void attend_latent(const MlaDims& d, std::span<const float> q_cat, const CacheRows& rows,
                   QueryKeys keys, LatentScratch& scratch, std::span<float> ctx_latent) {
  const int64_t n = keys.count();
  const int parts_count = latent_parts(n);
  const std::span<Thread> parts = scratch.prepare(d, parts_count);
  for (Thread& t : parts) reset(t);
  // Part p is whole tiles [tiles*p/P, tiles*(p+1)/P), whoever scans it: the
  // team may be smaller than asked for, and its size must not move a bit.
  const int64_t tiles = (n + kTileKeys - 1) / kTileKeys;
#pragma omp parallel num_threads(parts_count)
  {
    const int team = omp_get_num_threads(), tid = omp_get_thread_num();
    for (int p = tid; p < parts_count; p += team) {
      const int64_t first = tiles * p / parts_count * kTileKeys;
      const int64_t last = std::min(n, tiles * (p + 1) / parts_count * kTileKeys);
      scan_keys(d, q_cat, rows, keys, first, last, parts[static_cast<size_t>(p)]);
    }
  }
  merge(d, parts, ctx_latent);
}

void attend_latent_batch(const MlaDims& d, std::span<const float> q_cat, const CacheRows& rows,
                         std::span<const QueryKeys> keys, LatentScratch& scratch,
                         std::span<float> ctx_latent) {
  const int64_t S = static_cast<int64_t>(keys.size());
  const int64_t H = d.heads, W = d.cache_width(), L = d.kv_lora;
  const int threads = omp_get_max_threads();
  // Queries whose keys are split among threads go one at a time, as alone;
  // the others (one part each) side by side, a query per thread.
  std::vector<int64_t> whole;
  for (int64_t s = 0; s < S; ++s) {
    if (latent_parts(keys[s].count()) > 1 || S < threads) {
      attend_latent(d, q_cat.subspan(s * H * W, H * W), rows, keys[s], scratch,
                    ctx_latent.subspan(s * H * L, H * L));
    } else {
      whole.push_back(s);
    }
  }
  if (whole.empty()) return;
  const std::span<Thread> parts = scratch.prepare(d, threads);
  const int64_t n_whole = static_cast<int64_t>(whole.size());
#pragma omp parallel num_threads(threads)
  {
    Thread& t = parts[omp_get_thread_num()];
#pragma omp for schedule(dynamic)
    for (int64_t k = 0; k < n_whole; ++k) {
      const int64_t s = whole[static_cast<size_t>(k)];
      reset(t);
      scan_keys(d, q_cat.subspan(s * H * W, H * W), rows, keys[s], 0, keys[s].count(), t);
      merge(d, {&t, 1}, ctx_latent.subspan(s * H * L, H * L));
    }
  }
}

}  // namespace glmrt
