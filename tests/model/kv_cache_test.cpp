#include <glmrt/base/error.h>
#include <glmrt/kv/kv_cache.h>

#include <gtest/gtest.h>

#include <vector>

namespace glmrt {
namespace {

KvCacheShape shape() {
  return {2, 3, 2, {true, false}};
}

TEST(KvCache, AppendsGrowsAndTruncates) {
  MemoryBudget budget;
  KvCache cache(shape(), CacheType::f32, 1000, &budget);
  for (int t = 0; t < 200; ++t) {
    std::vector<float> kv = {float(t), float(t) + 0.5f, -float(t)}, keys = {1.f * t, 2.f * t};
    cache.append(0, 1, kv, keys);
  }
  EXPECT_EQ(cache.length(0), 200);
  EXPECT_EQ(cache.length(1), 0);
  std::vector<float> row(3);
  cache.kv_rows(0).load(150, row);
  EXPECT_EQ(row, (std::vector<float>{150.f, 150.5f, -150.f}));
  EXPECT_FLOAT_EQ(cache.index_key_rows(0).dot(7, std::vector<float>{1.f, 1.f}), 21.f);
  EXPECT_GT(budget.used(), 0u);
  cache.truncate(10);
  EXPECT_EQ(cache.length(0), 10);
  std::vector<float> kv = {9.f, 9.f, 9.f}, keys = {0.f, 0.f};
  cache.append(0, 1, kv, keys);
  cache.kv_rows(0).load(10, row);
  EXPECT_EQ(row[0], 9.f);
}

TEST(KvCache, Bf16StoresRoundedValues) {
  KvCache cache(shape(), CacheType::bf16, 10, nullptr);
  std::vector<float> kv = {1.f, 1.00390625f, 3.14159f}, keys = {0.f, 0.f};
  cache.append(0, 1, kv, keys);
  std::vector<float> row(3);
  cache.kv_rows(0).load(0, row);
  EXPECT_EQ(row[0], 1.f);
  EXPECT_EQ(row[1], 1.f);  // 1 + 2^-8 rounds to even
  EXPECT_NEAR(row[2], 3.14159f, 0.01f);
}

TEST(KvCache, RefusesToGrowPastMaxContext) {
  KvCache cache(shape(), CacheType::f32, 4, nullptr);
  std::vector<float> kv(15, 0.f), keys(10, 0.f);
  cache.append(0, 5 - 1, std::span(kv).first(12), std::span(keys).first(8));
  EXPECT_THROW(cache.append(0, 1, std::span(kv).first(3), std::span(keys).first(2)), Error);
}

}  // namespace
}  // namespace glmrt
