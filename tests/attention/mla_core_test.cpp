// The two forms of the MLA core against each other and against a direct
// double-precision evaluation of the definition (expand K and V from the latent
// rows, softmax attention per head), on random inputs: decode at several
// context lengths, dense and with a key selection, a causal prefill chunk, and
// the bf16 cache.
#include <glmrt/host/plugin_host.h>
#include <glmrt/model/mla_core.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace glmrt {
namespace {

// Widths off the 8-float vector length so every kernel's tail runs.
constexpr MlaDims kDims{.heads = 3, .kv_lora = 36, .rope = 6, .nope = 20, .v_head = 12};

std::vector<float> random_values(std::mt19937& rng, int64_t n, float spread = 1.f) {
  std::normal_distribution<float> normal(0.f, spread);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

class MlaCore : public ::testing::Test {
 protected:
  MlaCore()
      : services_(budget_, 2),
        kernels_(PluginHost(std::vector{std::filesystem::path(GLMRT_BUILD_DIR) / "plugins"})
                     .create_kernels(PluginChoice{"kernels-scalar", {}, {}}, services_)) {
    const int64_t H = kDims.heads, L = kDims.kv_lora, nope = kDims.nope, vd = kDims.v_head;
    key_ = random_values(rng_, H * nope * L, 0.2f);
    value_ = random_values(rng_, H * vd * L, 0.2f);
    std::vector<float> key_t(H * L * nope);
    for (int64_t h = 0; h < H; ++h)
      for (int64_t r = 0; r < nope; ++r)
        for (int64_t l = 0; l < L; ++l)
          key_t[(h * L + l) * nope + r] = key_[(h * nope + r) * L + l];
    key_absorb_ = Matrix::from_f32(key_t, H * L, nope, WeightBits::f32, nullptr, "test");
    value_matrix_ = Matrix::from_f32(value_, H * vd, L, WeightBits::f32, nullptr, "test");
  }

  MlaProjections projections() const { return {key_absorb_, value_matrix_}; }

  /// A one-layer cache of `type` holding `rows` ([T, cache_width]).
  static KvCache cache_with(const std::vector<float>& rows, CacheType type) {
    const int64_t W = kDims.cache_width(), T = static_cast<int64_t>(rows.size()) / W;
    KvCache cache({1, static_cast<int>(W), 8, {false}}, type, T, nullptr);
    cache.append(0, T, rows, {});
    return cache;
  }

  /// The definition in double precision over the rows as `cache` stores them.
  std::vector<double> reference(std::span<const float> q, const KvCache& cache,
                                std::span<const QueryKeys> keys) const {
    const int64_t H = kDims.heads, L = kDims.kv_lora, R = kDims.rope, nope = kDims.nope;
    const int64_t vd = kDims.v_head, qk = kDims.qk_head(), W = kDims.cache_width();
    const int64_t S = static_cast<int64_t>(keys.size());
    const CacheRows rows = cache.kv_rows(0);
    std::vector<double> out(S * H * vd, 0.0);
    std::vector<float> row(W);
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t n = keys[s].count();
        std::vector<double> scores(n), k_nope(nope);
        std::vector<std::vector<double>> values(n, std::vector<double>(vd));
        for (int64_t i = 0; i < n; ++i) {
          rows.load(keys[s].at(i), row);
          double score = 0.0;
          for (int64_t r = 0; r < nope; ++r) {
            double k = 0.0;
            for (int64_t l = 0; l < L; ++l) k += double(key_[(h * nope + r) * L + l]) * row[l];
            score += double(q[(s * H + h) * qk + r]) * k;
          }
          for (int64_t r = 0; r < R; ++r)
            score += double(q[(s * H + h) * qk + nope + r]) * row[L + r];
          scores[i] = score / std::sqrt(double(qk));
          for (int64_t c = 0; c < vd; ++c)
            for (int64_t l = 0; l < L; ++l)
              values[i][c] += double(value_[(h * vd + c) * L + l]) * row[l];
        }
        const double top = *std::max_element(scores.begin(), scores.end());
        double sum = 0.0;
        for (double& x : scores) sum += (x = std::exp(x - top));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t c = 0; c < vd; ++c)
            out[(s * H + h) * vd + c] += scores[i] / sum * values[i][c];
      }
    return out;
  }

  /// max |got - want| / max |want|.
  static double relative_error(std::span<const float> got, std::span<const double> want) {
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
      worst = std::max(worst, std::abs(got[i] - want[i]));
      scale = std::max(scale, std::abs(want[i]));
    }
    return worst / scale;
  }

  std::vector<float> absorbed(std::span<const float> q, const KvCache& cache,
                              std::span<const QueryKeys> keys) {
    std::vector<float> out(keys.size() * kDims.heads * kDims.v_head);
    absorbed_attention(backend_, kDims, projections(), q, cache.kv_rows(0), keys, scratch_, out);
    return out;
  }
  std::vector<float> reconstructed(std::span<const float> q, const KvCache& cache,
                                   std::span<const QueryKeys> keys) {
    std::vector<float> out(keys.size() * kDims.heads * kDims.v_head);
    reconstructed_attention(backend_, kDims, projections(), q, cache.kv_rows(0), keys, out);
    return out;
  }

  /// `count` distinct ascending positions below `visible`.
  std::vector<int32_t> random_selection(int64_t visible, int64_t count) {
    std::vector<int32_t> all(visible);
    for (int64_t i = 0; i < visible; ++i) all[i] = static_cast<int32_t>(i);
    std::shuffle(all.begin(), all.end(), rng_);
    all.resize(count);
    std::sort(all.begin(), all.end());
    return all;
  }

  std::mt19937 rng_{20240611};
  MemoryBudget budget_;
  HostServices services_;
  PluginHandle<plugin::Kernels> kernels_;
  KernelsBackend backend_{*kernels_, kernels_.info().abi_minor, kernels_.info().name};
  std::vector<float> key_, value_;
  Matrix key_absorb_, value_matrix_;
  LatentScratch scratch_;
};

TEST_F(MlaCore, DecodeFormsAgreeWithTheDefinition) {
  for (int64_t T : {1, 7, 64, 300}) {
    const KvCache cache = cache_with(random_values(rng_, T * kDims.cache_width()), CacheType::f32);
    const std::vector<float> q = random_values(rng_, kDims.heads * kDims.qk_head());
    const std::vector<int32_t> selection = random_selection(T, std::max<int64_t>(1, T / 3));
    for (const QueryKeys keys : {QueryKeys{{}, T}, QueryKeys{selection, T}}) {
      const std::vector<double> want = reference(q, cache, {&keys, 1});
      const std::vector<float> a = absorbed(q, cache, {&keys, 1});
      const std::vector<float> r = reconstructed(q, cache, {&keys, 1});
      EXPECT_LT(relative_error(a, want), 1e-5) << "absorbed T=" << T << " keys=" << keys.count();
      EXPECT_LT(relative_error(r, want), 1e-5)
          << "reconstructed T=" << T << " keys=" << keys.count();
      std::vector<double> a_wide(a.begin(), a.end());
      EXPECT_LT(relative_error(r, a_wide), 1e-5) << "forms T=" << T << " keys=" << keys.count();
    }
  }
}

TEST_F(MlaCore, PrefillChunkIsCausalInBothForms) {
  // 40 cached positions, then 6 new ones each seeing itself and what precedes
  // it; the fourth query has a DSA selection instead.
  const int64_t past = 40, S = 6;
  const KvCache cache =
      cache_with(random_values(rng_, (past + S) * kDims.cache_width()), CacheType::f32);
  const std::vector<float> q = random_values(rng_, S * kDims.heads * kDims.qk_head());
  const std::vector<int32_t> selection = random_selection(past + 4, 9);
  std::vector<QueryKeys> keys;
  for (int64_t s = 0; s < S; ++s) keys.push_back({{}, past + s + 1});
  keys[3].selected = selection;
  const std::vector<double> want = reference(q, cache, keys);
  EXPECT_LT(relative_error(absorbed(q, cache, keys), want), 1e-5);
  EXPECT_LT(relative_error(reconstructed(q, cache, keys), want), 1e-5);
}

TEST_F(MlaCore, Bf16CacheIsExactOnItsRowsAndCloseToF32) {
  const int64_t T = 300;
  const std::vector<float> rows = random_values(rng_, T * kDims.cache_width());
  const KvCache f32 = cache_with(rows, CacheType::f32), bf16 = cache_with(rows, CacheType::bf16);
  const std::vector<float> q = random_values(rng_, kDims.heads * kDims.qk_head());
  const std::vector<int32_t> selection = random_selection(T, 50);
  for (const QueryKeys keys : {QueryKeys{{}, T}, QueryKeys{selection, T}}) {
    // Widening bf16 is exact, so against the definition on the stored rows
    // only f32 arithmetic remains ...
    const std::vector<double> on_bf16_rows = reference(q, bf16, {&keys, 1});
    EXPECT_LT(relative_error(absorbed(q, bf16, {&keys, 1}), on_bf16_rows), 1e-5);
    EXPECT_LT(relative_error(reconstructed(q, bf16, {&keys, 1}), on_bf16_rows), 1e-5);
    // ... and against the f32 cache the 8-bit mantissa of the rows (relative
    // step 2^-8) is all that differs.
    const std::vector<double> on_f32_rows = reference(q, f32, {&keys, 1});
    const double error = relative_error(absorbed(q, bf16, {&keys, 1}), on_f32_rows);
    EXPECT_LT(error, 2e-2);
    EXPECT_GT(error, 1e-6);  // the bf16 path really read rounded rows
  }
}

TEST(AttentionForm, OneQueryIsAlwaysAbsorbed) {
  const MlaDims glm5{.heads = 64, .kv_lora = 512, .rope = 64, .nope = 192, .v_head = 256};
  const QueryKeys one{{}, 8192};
  EXPECT_EQ(faster_form(glm5, {&one, 1}), AttentionForm::absorbed);
  const QueryKeys tiny{{}, 1};
  EXPECT_EQ(faster_form(glm5, {&tiny, 1}), AttentionForm::absorbed);
}

TEST(AttentionForm, DecodeStepsWithDraftsStayAbsorbed) {
  // Narrow latents make expanding keys cheap: past kMaxAbsorbedOnlyRows a
  // fresh chunk goes reconstructed, but a step verifying drafts never does, so
  // its rows sum in the order a single query's does.
  const MlaDims narrow{.heads = 4, .kv_lora = 16, .rope = 4, .nope = 8, .v_head = 8};
  auto fresh = [](int64_t S) {
    std::vector<QueryKeys> keys;
    for (int64_t s = 0; s < S; ++s) keys.push_back({{}, s + 1});
    return keys;
  };
  for (int64_t S : {int64_t{2}, int64_t{5}, kMaxAbsorbedOnlyRows})
    EXPECT_EQ(faster_form(narrow, fresh(S)), AttentionForm::absorbed) << S;
  EXPECT_EQ(faster_form(narrow, fresh(kMaxAbsorbedOnlyRows + 1)), AttentionForm::reconstructed);
}

TEST(AttentionForm, LongFreshPrefillIsReconstructed) {
  // A causal chunk of 1024 new positions from an empty cache: expanding each
  // key once beats projecting every query both ways plus the wider latent scan.
  const MlaDims glm5{.heads = 64, .kv_lora = 512, .rope = 64, .nope = 192, .v_head = 256};
  std::vector<QueryKeys> keys;
  for (int64_t s = 0; s < 1024; ++s) keys.push_back({{}, s + 1});
  EXPECT_EQ(faster_form(glm5, keys), AttentionForm::reconstructed);
}

}  // namespace
}  // namespace glmrt
