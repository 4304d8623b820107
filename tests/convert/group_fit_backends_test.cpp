// Every fixed-point search backend this CPU can run (not only the fastest,
// which glmrt convert picks) returns the specification's scale and codes bit
// for bit: a container converted on any machine gets the same bytes.
#include <glmrt/base/cpu_features.h>

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "weights/group_fit_fixed_kernels.h"

namespace glmrt {
namespace {

using fixed_kernels::FixedBackend;

std::vector<std::string> names(std::span<const FixedBackend* const> backends) {
  std::vector<std::string> out;
  for (const FixedBackend* b : backends) out.emplace_back(b->name);
  return out;
}

TEST(GroupFitBackends, TheCpuFeaturesDecideWhichRun) {
  std::vector<std::string> expected;
  if (cpu_features().avx512) expected.emplace_back("avx512-vnni");
  if (cpu_features().avx2_fma) expected.emplace_back("avx2");
  expected.emplace_back("scalar");
  EXPECT_EQ(names(fixed_kernels::runnable_fixed_backends()), expected);
  EXPECT_EQ(std::string(fixed_kernels::fixed_backend().name), expected.front());
}

TEST(GroupFitBackends, EveryRunnableBackendMatchesTheSpecificationBitForBit) {
  // int4 (codes -8..7) and int2 (-2..1) targets, as group_quantizer.cpp builds them.
  const int16_t int4_targets[kFixedCandidates] = {56, 58, 61, 63, -64, -66, -69, -71};
  const int16_t int2_targets[kFixedCandidates] = {8, 10, 13, 15, -16, -18, -21, -23};
  const int16_t int3_targets[kFixedCandidates] = {24, 26, 29, 31, -32, -34, -37, -39};
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> uni(-1.f, 1.f), pos(0.f, 4.f);
  for (const FixedBackend* backend : fixed_kernels::runnable_fixed_backends()) {
    SCOPED_TRACE(backend->name);
    // Partial blocks of 2, 4, 16 and 32 values, past one flush of the 32-bit
    // sums (256) and past the on-stack scratch; weighted and not.
    for (size_t n : {1, 5, 8, 13, 16, 33, 64, 100, 257, 300, 1100})
      for (int weighted = 0; weighted < 2; ++weighted)
        for (int trial = 0; trial < 20; ++trial) {
          std::vector<float> w(n), a(n);
          for (auto& v : w) v = uni(rng) * uni(rng);
          for (auto& v : a) v = pos(rng);
          const std::span<const float> imp =
              weighted ? std::span<const float>(a) : std::span<const float>();
          EXPECT_EQ(backend->signed_extreme(w), fixed_kernels::signed_extreme_of_values(w));
          for (const auto* t : {&int4_targets, &int3_targets, &int2_targets}) {
            const int qmax = t == &int4_targets ? 7 : t == &int3_targets ? 3 : 1;
            std::vector<signed char> got(n), want(n);
            const float s_got = backend->quantize(w, imp, *t, -qmax - 1, qmax, got.data());
            const float s_want = fixed_kernels::kScalarFixedBackend.quantize(w, imp, *t, -qmax - 1,
                                                                             qmax, want.data());
            EXPECT_EQ(std::memcmp(&s_got, &s_want, sizeof(float)), 0) << "n " << n;
            EXPECT_EQ(got, want) << "n " << n;
          }
        }
  }
}

}  // namespace
}  // namespace glmrt
