// kv/row_math.h's variants. The AVX2 one must add up in exactly the order it
// documents (the order the core ran when it was compiled for the build
// machine's CPU): written out here one value at a time and compared bit for
// bit, so attention results on AVX2 machines cannot move unnoticed. The
// portable one must agree with the definitions to rounding.
#include <glmrt/base/cpu_features.h>
#include <glmrt/kv/row_math.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kv/row_math_variants.h"

namespace glmrt {
namespace {

using row_math::RowMathVariant;

// The AVX2 order, one lane at a time.
std::array<float, 8> fused_lanes(const float* a, const float* b, int64_t blocks) {
  std::array<float, 8> lanes{};
  for (int64_t j = 0; j < 8 * blocks; ++j) lanes[j % 8] = std::fma(a[j], b[j], lanes[j % 8]);
  return lanes;
}

// vaddps of the halves, vmovhlps, then one vaddss.
float horizontal_sum(const std::array<float, 8>& l) {
  const float h0 = l[0] + l[4], h1 = l[1] + l[5], h2 = l[2] + l[6], h3 = l[3] + l[7];
  return (h0 + h2) + (h1 + h3);
}

// A query against one of four keys: past the blocks of 8, one block of four
// unfused products (when four are left), then fused single products.
float four_dots_order(const float* q, const float* k, int64_t n) {
  float s = horizontal_sum(fused_lanes(q, k, n / 8));
  int64_t j = n / 8 * 8;
  if (j + 4 <= n)
    for (const int64_t end = j + 4; j < end; ++j) s += q[j] * k[j];
  for (; j < n; ++j) s = std::fma(q[j], k[j], s);
  return s;
}

// A lone dot: the leftovers go to lane 0, the lanes add up from lane 0.
float dot_order(const float* a, const float* b, int64_t n) {
  std::array<float, 8> lanes = fused_lanes(a, b, n / 8);
  for (int64_t j = n / 8 * 8; j < n; ++j) lanes[0] = std::fma(a[j], b[j], lanes[0]);
  float sum = 0.f;
  for (float lane : lanes) sum += lane;
  return sum;
}

void scaled_dots_order(RowBlock queries, RowBlock keys, int64_t width, float scale, float* out,
                       int64_t out_stride) {
  for (int64_t i = 0; i < queries.rows; ++i) {
    float* o = out + i * out_stride;
    const int64_t grouped = keys.rows / 4 * 4;
    for (int64_t j = 0; j < keys.rows; ++j)
      o[j] =
          (j < grouped ? four_dots_order : dot_order)(queries.row(i), keys.row(j), width) * scale;
  }
}

void weighted_row_sum_order(const float* w, RowBlock rows, float* acc, int64_t n) {
  int64_t j = 0;
  for (; j + 4 <= rows.rows; j += 4) {
    const float *r0 = rows.row(j), *r1 = rows.row(j + 1), *r2 = rows.row(j + 2),
                *r3 = rows.row(j + 3);
    for (int64_t e = 0; e < n; ++e) {
      if (e < n / 8 * 8) {
        float a = acc[e];
        for (int k = 0; k < 4; ++k) a = std::fma(w[j + k], rows.row(j + k)[e], a);
        acc[e] = a;
      } else {
        acc[e] += std::fma(w[j + 3], r3[e],
                           std::fma(w[j + 2], r2[e], std::fma(w[j], r0[e], w[j + 1] * r1[e])));
      }
    }
  }
  for (; j < rows.rows; ++j)
    for (int64_t e = 0; e < n; ++e) acc[e] = std::fma(w[j], rows.row(j)[e], acc[e]);
}

// Per key, from head 0 up: one fused multiply-add per head.
std::vector<float> relu_weighted_sums_order(const std::vector<float>& w, const float* dots,
                                            int64_t stride, int64_t n) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    float total = 0.f;
    for (size_t h = 0; h < w.size(); ++h) {
      const float d = dots[h * stride + i];
      total = std::fma(d < 0.f ? 0.f : d, w[h], total);
    }
    out[i] = total;
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Case {
  int64_t width, stride, queries, keys;
  std::vector<float> q, k, w, acc;
};

// Every remainder of 8 and of 4 in widths and key counts, padded strides.
std::vector<Case> cases() {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<Case> all;
  for (int64_t width : {1, 3, 4, 5, 7, 8, 12, 13, 15, 21, 64, 67, 576})
    for (int64_t keys : {1, 3, 4, 7, 9}) {
      Case c{width, width + keys % 3, 2, keys, {}, {}, {}, {}};
      const auto fill = [&](std::vector<float>& v, int64_t n) {
        v.resize(n);
        for (float& x : v) x = normal(rng);
      };
      fill(c.q, c.queries * c.stride);
      fill(c.k, c.keys * c.stride);
      fill(c.w, c.keys);
      fill(c.acc, c.width);
      all.push_back(std::move(c));
    }
  return all;
}

TEST(RowMath, TheAvx2VariantRunsWhereverTheCpuHasAvx2AndFma) {
  EXPECT_EQ(std::string(row_math::row_math_variant().name),
            cpu_features().avx2_fma ? "avx2" : "portable");
}

TEST(RowMath, Avx2SumsInItsDocumentedOrderBitForBit) {
  if (!cpu_features().avx2_fma) GTEST_SKIP() << "this CPU lacks AVX2 or FMA";
  const RowMathVariant& v = row_math::kAvx2RowMath;
  for (const Case& c : cases()) {
    SCOPED_TRACE("width " + std::to_string(c.width) + ", keys " + std::to_string(c.keys));
    const RowBlock queries{c.q.data(), c.queries, c.stride}, keys{c.k.data(), c.keys, c.stride};
    std::vector<float> got(c.queries * c.keys), want(got.size());
    v.scaled_dots(queries, keys, c.width, 0.3f, got, c.keys);
    scaled_dots_order(queries, keys, c.width, 0.3f, want.data(), c.keys);
    EXPECT_TRUE(same_bits(got, want));

    std::vector<float> acc = c.acc, acc_want = c.acc;
    v.weighted_row_sum(c.w, keys, acc);
    weighted_row_sum_order(c.w.data(), keys, acc_want.data(), c.width);
    EXPECT_TRUE(same_bits(acc, acc_want));

    const std::span<const float> q0(c.q.data(), c.width);
    EXPECT_TRUE(same_bits({v.dot(q0, c.k.data())}, {dot_order(c.q.data(), c.k.data(), c.width)}));
    acc = acc_want = c.acc;
    v.axpy(0.7f, q0, acc);
    for (int64_t e = 0; e < c.width; ++e) acc_want[e] = std::fma(0.7f, c.q[e], acc_want[e]);
    EXPECT_TRUE(same_bits(acc, acc_want));

    // Heads = keys rows of `width` dots each: every remainder of 8 in the keys.
    std::vector<float> sums(c.width);
    v.relu_weighted_sums(c.w, c.k.data(), c.stride, sums);
    EXPECT_TRUE(same_bits(sums, relu_weighted_sums_order(c.w, c.k.data(), c.stride, c.width)));
  }
}

TEST(RowMath, EveryVariantMatchesTheDefinitions) {
  std::vector<const RowMathVariant*> variants = {&row_math::kPortableRowMath};
  if (cpu_features().avx2_fma) variants.push_back(&row_math::kAvx2RowMath);
  for (const RowMathVariant* v : variants)
    for (const Case& c : cases()) {
      SCOPED_TRACE(std::string(v->name) + ", width " + std::to_string(c.width) + ", keys " +
                   std::to_string(c.keys));
      const RowBlock queries{c.q.data(), c.queries, c.stride}, keys{c.k.data(), c.keys, c.stride};
      std::vector<float> scores(c.queries * c.keys);
      v->scaled_dots(queries, keys, c.width, 0.3f, scores, c.keys);
      for (int64_t i = 0; i < c.queries; ++i)
        for (int64_t j = 0; j < c.keys; ++j) {
          double exact = 0, magnitude = 0;
          for (int64_t e = 0; e < c.width; ++e) {
            exact += double(queries.row(i)[e]) * keys.row(j)[e];
            magnitude += std::fabs(double(queries.row(i)[e]) * keys.row(j)[e]);
          }
          EXPECT_NEAR(scores[i * c.keys + j], 0.3 * exact, 1e-6 * magnitude);
        }
      std::vector<float> acc = c.acc;
      v->weighted_row_sum(c.w, keys, acc);
      for (int64_t e = 0; e < c.width; ++e) {
        double exact = c.acc[e], magnitude = std::fabs(c.acc[e]);
        for (int64_t j = 0; j < c.keys; ++j) {
          exact += double(c.w[j]) * keys.row(j)[e];
          magnitude += std::fabs(double(c.w[j]) * keys.row(j)[e]);
        }
        EXPECT_NEAR(acc[e], exact, 1e-6 * magnitude);
      }
      std::vector<float> sums(c.width);
      v->relu_weighted_sums(c.w, c.k.data(), c.stride, sums);
      for (int64_t i = 0; i < c.width; ++i) {
        double exact = 0, magnitude = 0;
        for (int64_t h = 0; h < c.keys; ++h) {
          const double term = std::max(c.k[h * c.stride + i], 0.f) * double(c.w[h]);
          exact += term;
          magnitude += std::fabs(term);
        }
        EXPECT_NEAR(sums[i], exact, 1e-6 * magnitude);
      }
      std::vector<float> nan_dots(c.keys * c.stride, 1.f);
      nan_dots[c.width - 1] = std::nanf("");
      v->relu_weighted_sums(c.w, nan_dots.data(), c.stride, sums);
      EXPECT_TRUE(std::isnan(sums[c.width - 1]));

      std::vector<uint16_t> bf16(c.width);
      std::vector<float> widened(c.width);
      for (int64_t e = 0; e < c.width; ++e) bf16[e] = static_cast<uint16_t>(0x3f80 + 37 * e);
      v->widen_bf16(bf16, widened);
      for (int64_t e = 0; e < c.width; ++e) {
        uint32_t bits;
        std::memcpy(&bits, &widened[e], sizeof bits);
        EXPECT_EQ(bits, uint32_t{bf16[e]} << 16);  // NaN patterns too
      }
    }
}

}  // namespace
}  // namespace glmrt
