// HostServices: budgeted aligned allocation, parallel_for, thread count.
#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace glmrt {
namespace {

TEST(HostServicesTest, AllocIsAlignedAndChargedUntilFreed) {
  MemoryBudget budget;
  HostServices host(budget, 1);
  const glmrt_host_services* s = host.get();
  void* p = s->alloc(s->context, 1000, 256);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  EXPECT_EQ(budget.by_category().at("plugin:alloc"), 1000u);
  void* q = s->alloc(s->context, 24, 8);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(budget.used(), 1024u);
  s->free(s->context, p);
  s->free(s->context, q);
  EXPECT_EQ(budget.used(), 0u);
  s->free(s->context, nullptr);  // harmless, like free(NULL)
}

TEST(HostServicesTest, AllocBeyondBudgetOrWithBadAlignmentFails) {
  MemoryBudget budget(100);
  HostServices host(budget, 1);
  const glmrt_host_services* s = host.get();
  EXPECT_EQ(s->alloc(s->context, 1000, 64), nullptr);
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_EQ(s->alloc(s->context, 10, 48), nullptr);  // not a power of two
}

TEST(HostServicesTest, ParallelForVisitsEveryIndexOnce) {
  MemoryBudget budget;
  HostServices host(budget, 4);
  const glmrt_host_services* s = host.get();
  for (int64_t n : {0, 1, 7, 1003}) {
    std::vector<std::atomic<int>> visits(static_cast<size_t>(n));
    s->parallel_for(
        s->context, n, 10,
        [](void* context, int64_t begin, int64_t end) {
          auto& v = *static_cast<std::vector<std::atomic<int>>*>(context);
          for (int64_t i = begin; i < end; ++i) v[static_cast<size_t>(i)]++;
        },
        &visits);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(visits[static_cast<size_t>(i)].load(), 1) << i;
  }
}

TEST(HostServicesTest, ThreadCountZeroMeansAllCoresAndNegativeIsRefused) {
  MemoryBudget budget;
  EXPECT_GE(HostServices(budget, 0).n_threads(), 1);
  EXPECT_EQ(HostServices(budget, 3).n_threads(), 3);
  EXPECT_EQ(HostServices(budget, 3).get()->abi_major, GLMRT_ABI_MAJOR);
  EXPECT_THROW(HostServices(budget, -1), Error);
}

}  // namespace
}  // namespace glmrt
