// The per-group scale search: never worse than the max-abs rule in the error
// it minimises, better on typical weights, importance-weighted when asked,
// codes in range, zero groups harmless.
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace glmrt {
namespace {

double weighted_error(const std::vector<float>& w, const std::vector<float>& a, const int8_t* q,
                      float s) {
  double e = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double d = w[i] - static_cast<double>(q[i]) * s;
    e += (a.empty() ? 1.0 : a[i]) * d * d;
  }
  return e;
}

// The max-abs rule's error: s = max|w| / qmax, q = round(w / s).
double max_abs_error(const std::vector<float>& w, const std::vector<float>& a, uint32_t type) {
  const int qmax = packed_qmax(type);
  float amax = 0;
  for (float v : w) amax = std::max(amax, std::fabs(v));
  const float s = amax / static_cast<float>(qmax);
  std::vector<int8_t> q(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    q[i] = static_cast<int8_t>(std::clamp<float>(std::nearbyint(w[i] / s), -qmax - 1.f, qmax));
  return weighted_error(w, a, q.data(), s);
}

TEST(GroupQuantizer, NeverWorseThanMaxAbsAndUsuallyBetter) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (uint32_t type : {GLMRT_I8, GLMRT_I4, GLMRT_I2}) {
    double searched = 0, plain = 0;
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<float> w(64);
      for (auto& v : w) v = normal(rng);
      std::vector<int8_t> q(w.size());
      const float s = quantize_group_searched(w, {}, type, q.data());
      const int qmax = packed_qmax(type);
      for (int8_t c : q) ASSERT_TRUE(c >= -qmax - 1 && c <= qmax);
      const double e = weighted_error(w, {}, q.data(), s);
      const double base = max_abs_error(w, {}, type);
      ASSERT_LE(e, base * (1 + 1e-5)) << "type " << type << " trial " << trial;
      searched += e;
      plain += base;
    }
    EXPECT_LT(searched, plain * (type == GLMRT_I8 ? 1.0 : 0.9)) << "type " << type;
  }
}

TEST(GroupQuantizer, ImportanceMovesTheErrorToUnimportantInputs) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  double with = 0, without = 0;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<float> w(64), a(64);
    for (auto& v : w) v = normal(rng);
    for (size_t i = 0; i < a.size(); ++i) a[i] = i % 8 == 0 ? 50.f : 0.1f;
    std::vector<int8_t> q1(64), q2(64);
    const float s1 = quantize_group_searched(w, a, GLMRT_I4, q1.data());
    const float s2 = quantize_group_searched(w, {}, GLMRT_I4, q2.data());
    with += weighted_error(w, a, q1.data(), s1);
    without += weighted_error(w, a, q2.data(), s2);
  }
  EXPECT_LT(with, without);
}

TEST(GroupQuantizer, ZeroGroupGivesZeroCodes) {
  std::vector<float> w(32, 0.f);
  std::vector<int8_t> q(32, 5);
  const float s = quantize_group_searched(w, {}, GLMRT_I4, q.data());
  EXPECT_GT(s, 0.f);
  for (int8_t c : q) EXPECT_EQ(c, 0);
}

}  // namespace
}  // namespace glmrt
