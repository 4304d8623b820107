// The row sums of kv/row_math.h at GLM-5's shapes, on data that stays in
// cache: the kernels alone, in the variant this CPU runs. The indexer's scan
// is parallel: OMP_NUM_THREADS=1 build/bench/attention/row_math_bench
//
//   BM_ScaledDots: 64 heads against a tile of 16 latent rows of 576 (the
//   absorbed scan's scores); BM_WeightedRowSum: 16 rows of 512 into one
//   head's sum; BM_IndexerScores: 32 heads x 128 over 4096 cached keys, f32
//   and bf16 (dots, the relu-weighted head sums, bf16 widening); BM_Dot and
//   BM_Axpy: one row of 576 / 512.
#include <glmrt/kv/kv_cache.h>
#include <glmrt/kv/row_math.h>
#include <glmrt/model/indexer.h>

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

namespace glmrt {
namespace {

std::vector<float> random_values(int64_t n) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void BM_ScaledDots(benchmark::State& state) {
  constexpr int64_t kHeads = 64, kKeys = 16, kWidth = 576;
  const std::vector<float> q = random_values(kHeads * kWidth), k = random_values(kKeys * kWidth);
  std::vector<float> out(kHeads * kKeys);
  for (auto _ : state) {
    scaled_dots({q.data(), kHeads, kWidth}, {k.data(), kKeys, kWidth}, kWidth, 0.1f, out, kKeys);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["flop/s"] = benchmark::Counter(2.0 * kHeads * kKeys * kWidth,
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ScaledDots);

void BM_WeightedRowSum(benchmark::State& state) {
  constexpr int64_t kRows = 16, kWidth = 512;
  const std::vector<float> w = random_values(kRows), rows = random_values(kRows * kWidth);
  std::vector<float> acc(kWidth);
  for (auto _ : state) {
    weighted_row_sum(w, {rows.data(), kRows, kWidth}, acc);
    benchmark::DoNotOptimize(acc.data());
  }
  state.counters["flop/s"] =
      benchmark::Counter(2.0 * kRows * kWidth, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_WeightedRowSum);

void BM_IndexerScores(benchmark::State& state) {
  constexpr int64_t kHeads = 32, kDim = 128, kKeys = 4096;
  const CacheType type = state.range(0) ? CacheType::bf16 : CacheType::f32;
  KvCache cache({1, 1, static_cast<int>(kDim), {true}}, type, kKeys, nullptr);
  cache.append(0, kKeys, std::vector<float>(kKeys, 0.f), random_values(kKeys * kDim));
  const std::vector<float> q = random_values(kHeads * kDim), weights = random_values(kHeads);
  std::vector<float> scores(kKeys);
  for (auto _ : state) {
    indexer_scores(q, weights, cache.index_key_rows(0), kKeys, scores);
    benchmark::DoNotOptimize(scores.data());
  }
  state.SetLabel(state.range(0) ? "bf16 cache" : "f32 cache");
}
BENCHMARK(BM_IndexerScores)->ArgName("bf16")->Arg(0)->Arg(1);

void BM_Dot(benchmark::State& state) {
  const std::vector<float> a = random_values(576), b = random_values(576);
  for (auto _ : state) benchmark::DoNotOptimize(dot(a, b.data()));
}
BENCHMARK(BM_Dot);

void BM_Axpy(benchmark::State& state) {
  const std::vector<float> x = random_values(512);
  std::vector<float> y(512);
  for (auto _ : state) {
    axpy(1e-3f, x, y);
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_Axpy);

}  // namespace
}  // namespace glmrt

BENCHMARK_MAIN();
