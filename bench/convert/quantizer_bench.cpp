// Per-group scale search throughput: groups per second and the CPU seconds it
// costs per GB of BF16 weights (`s_per_GB_bf16`), vectorized vs the scalar
// reference (counters per CPU second). build/bench/convert/quantizer_bench
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

namespace {

constexpr size_t kBenchGroups = 4096;

using SearchFn = float (*)(std::span<const float>, std::span<const float>, uint32_t, int8_t*);

// Args: group size, element type (GLMRT_I4/GLMRT_I2), weighted (0/1).
void run_search(benchmark::State& state, SearchFn search, const char* backend) {
  const size_t g = static_cast<size_t>(state.range(0));
  const auto type = static_cast<uint32_t>(state.range(1));
  const bool weighted = state.range(2) != 0;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 0.02f);
  std::exponential_distribution<float> importance(1.f);
  std::vector<float> w(g * kBenchGroups), a(g * kBenchGroups);
  for (auto& v : w) v = normal(rng);
  for (auto& v : a) v = importance(rng);
  std::vector<int8_t> q(g);
  for (auto _ : state) {
    for (size_t k = 0; k < kBenchGroups; ++k) {
      const std::span<const float> group(w.data() + k * g, g);
      const std::span<const float> imp =
          weighted ? std::span<const float>(a.data() + k * g, g) : std::span<const float>();
      benchmark::DoNotOptimize(search(group, imp, type, q.data()));
    }
    benchmark::ClobberMemory();
  }
  const double groups = static_cast<double>(state.iterations()) * kBenchGroups;
  state.counters["groups/s"] = benchmark::Counter(groups, benchmark::Counter::kIsRate);
  // Seconds per GB of BF16 input (2 bytes a weight): the inverse rate, scaled.
  state.counters["s_per_GB_bf16"] =
      benchmark::Counter(groups * static_cast<double>(g) * 2 / 1e9,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(backend);
}

void BM_GroupSearch(benchmark::State& state) {
  run_search(state, glmrt::quantize_group_searched, glmrt::group_fit_backend());
}
void BM_GroupSearchScalar(benchmark::State& state) {
  run_search(state, glmrt::quantize_group_searched_scalar, "scalar");
}

void search_args(benchmark::internal::Benchmark* b) {
  for (int weighted : {0, 1}) {
    b->Args({64, GLMRT_I4, weighted});
    b->Args({32, GLMRT_I2, weighted});
  }
  b->ArgNames({"group", "type", "weighted"})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_GroupSearch)->Apply(search_args);
BENCHMARK(BM_GroupSearchScalar)->Apply(search_args);

}  // namespace

BENCHMARK_MAIN();
