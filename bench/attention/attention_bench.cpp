// One layer's MLA attention for a decode step at GLM-5 dimensions, measured
// AFTER the q/kv projections and BEFORE o_proj: from the roped queries and the
// cached rows to the [heads * v_head] vector o_proj would mix. Inputs and
// kv_b weights (f32) are random. Matmuls go through the best kernels plugin
// found in the build tree ("auto").
//
//   BM_Decode: form (absorbed | reconstructed) x keys (dense | DSA) x cache
//   (f32 | bf16) x context T. DSA includes the indexer's own scan (32 heads x
//   128 over all T cached index keys) and top-2048 selection; up to T = 2048
//   DSA selects nothing and equals dense.
//   BM_Prefill: a causal chunk of S new positions after `past` cached ones,
//   dense, both forms: the crossover that attention_form.cpp encodes.
#include <glmrt/host/plugin_host.h>
#include <glmrt/model/indexer.h>
#include <glmrt/model/mla_core.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <vector>

namespace glmrt {
namespace {

constexpr MlaDims kGlm5{.heads = 64, .kv_lora = 512, .rope = 64, .nope = 192, .v_head = 256};
constexpr int64_t kIndexHeads = 32, kIndexDim = 128, kIndexTopk = 2048;

std::vector<float> random_values(std::mt19937& rng, int64_t n, float spread) {
  std::normal_distribution<float> normal(0.f, spread);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

/// The kernels plugin, the kv_b blocks and the random caches, built once.
class Setup {
 public:
  static Setup& get() {
    static Setup setup;
    return setup;
  }

  KernelsBackend& kernels() { return backend_; }
  const std::string& kernels_name() const { return kernels_.info().name; }
  MlaProjections projections() const { return {key_absorb_, value_}; }

  /// A one-layer cache with T random rows and index keys.
  const KvCache& cache(int64_t T, CacheType type) {
    auto& slot = caches_[{T, type}];
    if (!slot) {
      slot = std::make_unique<KvCache>(
          KvCacheShape{
              1, static_cast<int>(kGlm5.cache_width()), static_cast<int>(kIndexDim), {true}},
          type, T, nullptr);
      slot->append(0, T, random_values(rng_, T * kGlm5.cache_width(), 1.f),
                   random_values(rng_, T * kIndexDim, 1.f));
    }
    return *slot;
  }

  std::vector<float> random(int64_t n, float spread = 1.f) {
    return random_values(rng_, n, spread);
  }

 private:
  Setup()
      : services_(budget_, 0),
        kernels_(PluginHost(std::vector{std::filesystem::path(GLMRT_BUILD_DIR) / "plugins"})
                     .create_kernels(PluginChoice{"auto", {}, {}}, services_)) {
    const int64_t H = kGlm5.heads, L = kGlm5.kv_lora, nope = kGlm5.nope, vd = kGlm5.v_head;
    const float spread = 1.f / std::sqrt(static_cast<float>(L));
    key_absorb_ = Matrix::from_f32(random(H * L * nope, spread), H * L, nope, WeightBits::f32,
                                   nullptr, "bench");
    value_ =
        Matrix::from_f32(random(H * vd * L, spread), H * vd, L, WeightBits::f32, nullptr, "bench");
  }

  std::mt19937 rng_{42};
  MemoryBudget budget_;
  HostServices services_;
  PluginHandle<plugin::Kernels> kernels_;
  KernelsBackend backend_{*kernels_, kernels_.info().abi_minor, kernels_.info().name};
  Matrix key_absorb_, value_;
  std::map<std::pair<int64_t, CacheType>, std::unique_ptr<KvCache>> caches_;
};

void BM_Decode(benchmark::State& state) {
  const bool reconstructed = state.range(0), dsa = state.range(1), bf16 = state.range(2);
  const int64_t T = state.range(3);
  Setup& setup = Setup::get();
  const KvCache& cache = setup.cache(T, bf16 ? CacheType::bf16 : CacheType::f32);
  const std::vector<float> q = setup.random(kGlm5.heads * kGlm5.qk_head());
  const std::vector<float> index_q = setup.random(kIndexHeads * kIndexDim);
  const std::vector<float> index_weights = setup.random(kIndexHeads, 0.2f);
  std::vector<float> index_scores(T), out(kGlm5.heads * kGlm5.v_head);
  LatentScratch scratch;
  for (auto _ : state) {
    std::vector<int32_t> selection;
    if (dsa && T > kIndexTopk) {
      indexer_scores(index_q, index_weights, cache.index_key_rows(0), T, index_scores);
      selection = top_keys(index_scores, kIndexTopk);
    }
    const QueryKeys keys{selection, T};
    if (reconstructed)
      reconstructed_attention(setup.kernels(), kGlm5, setup.projections(), q, cache.kv_rows(0),
                              {&keys, 1}, out);
    else
      absorbed_attention(setup.kernels(), kGlm5, setup.projections(), q, cache.kv_rows(0),
                         {&keys, 1}, scratch, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(fmt::format("{} {} {} cache, q/kv-proj..o_proj, kernels {}",
                             reconstructed ? "reconstructed" : "absorbed", dsa ? "DSA" : "dense",
                             bf16 ? "bf16" : "f32", setup.kernels_name()));
}
BENCHMARK(BM_Decode)
    ->ArgNames({"recon", "dsa", "bf16", "T"})
    ->ArgsProduct({{0, 1}, {0, 1}, {0, 1}, {512, 2048, 8192, 32768}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Prefill(benchmark::State& state) {
  const bool reconstructed = state.range(0);
  const int64_t S = state.range(1), past = state.range(2);
  Setup& setup = Setup::get();
  const KvCache& cache = setup.cache(past + S, CacheType::f32);
  const std::vector<float> q = setup.random(S * kGlm5.heads * kGlm5.qk_head());
  std::vector<QueryKeys> keys;
  for (int64_t s = 0; s < S; ++s) keys.push_back({{}, past + s + 1});
  std::vector<float> out(S * kGlm5.heads * kGlm5.v_head);
  LatentScratch scratch;
  for (auto _ : state) {
    if (reconstructed)
      reconstructed_attention(setup.kernels(), kGlm5, setup.projections(), q, cache.kv_rows(0),
                              keys, out);
    else
      absorbed_attention(setup.kernels(), kGlm5, setup.projections(), q, cache.kv_rows(0), keys,
                         scratch, out);
    benchmark::DoNotOptimize(out.data());
  }
  const bool chosen = faster_form(kGlm5, keys) == AttentionForm::reconstructed;
  state.SetLabel(fmt::format("{} dense f32 cache; rule picks {}",
                             reconstructed ? "reconstructed" : "absorbed",
                             chosen ? "reconstructed" : "absorbed"));
}
BENCHMARK(BM_Prefill)
    ->ArgNames({"recon", "S", "past"})
    ->ArgsProduct({{0, 1}, {16, 64, 256}, {0, 2048}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace glmrt

BENCHMARK_MAIN();
