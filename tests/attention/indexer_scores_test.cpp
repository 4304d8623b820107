// The DSA indexer's scan (scores of every cached key, top-k) against a direct
// evaluation of its definition.
#include <glmrt/base/parallel_work.h>
#include <glmrt/model/indexer.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace glmrt {
namespace {

void expect_scores_match_the_definition(int64_t heads, int64_t d, int64_t T) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  auto random = [&](int64_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng);
    return v;
  };
  const std::vector<float> q = random(heads * d), weights = random(heads), keys = random(T * d);
  for (CacheType type : {CacheType::f32, CacheType::bf16}) {
    KvCache cache({1, 2, static_cast<int>(d), {true}}, type, T, nullptr);
    cache.append(0, T, std::vector<float>(T * 2, 0.f), keys);
    const CacheRows rows = cache.index_key_rows(0);
    std::vector<float> scores(T);
    indexer_scores(q, weights, rows, T, scores);
    std::vector<float> key(d);
    for (int64_t t = 0; t < T; ++t) {
      rows.load(t, key);  // the stored (possibly rounded) key
      double want = 0.0;
      for (int64_t h = 0; h < heads; ++h) {
        double dot = 0.0;
        for (int64_t j = 0; j < d; ++j) dot += double(q[h * d + j]) * key[j];
        want += std::max(dot / std::sqrt(double(d)), 0.0) * weights[h];
      }
      EXPECT_NEAR(scores[t], want, 1e-5 * (1.0 + std::abs(want))) << "t=" << t;
    }
  }
}

TEST(IndexerScores, MatchTheDefinitionInBothCacheTypes) {
  expect_scores_match_the_definition(3, 20, 150);  // several tiles and a partial one
}

TEST(IndexerScores, MatchTheDefinitionWhenTheKeysAreSharedOutAmongThreads) {
  // 8 heads x 64 x 2100 keys: above the size one thread scans alone.
  static_assert(8 * 64 * 2100 >= kMinParallelMultiplyAdds);
  expect_scores_match_the_definition(8, 64, 2100);
}

TEST(TopKeys, KeepsTheBestInPositionOrderAndBreaksTiesEarly) {
  const std::vector<float> scores = {1.f, 3.f, 3.f, 2.f, 3.f, 0.5f};
  EXPECT_EQ(top_keys(scores, 2), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(top_keys(scores, 4), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(top_keys(scores, 10), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace glmrt
