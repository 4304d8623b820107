// The packed layouts of the lane kernels (ggml_lanes.h) and their meets,
// written once for both widths (ggml_lane_vectors.h): ggml_lanes.cpp and
// ggml_lanes_k.cpp instantiate them on Lanes8, ggml_lanes_wide.cpp on
// Lanes16. Each meet mirrors its row-at-a-time kernel in ggml_dots_k.cpp
// step for step (the block layouts are described there). Offsets are those
// of the 8-row layout (32-byte units), times V::kWiden.
#pragma once

#include "ggml_lane_kernels.h"

namespace glmrt::kernels_avx2::lanes {

// q8_0 and q4_0: per block, 8 chunks of codes then the rows' d.
inline constexpr int64_t kPacked32 = 8 * 32 + kLaneRows * 4;
// The K-quants: per super-block, 8 sub-blocks of 8 chunks of codes, then
// q4_k: per sub-block the rows' scales, then their mins, then d and dmin
// (floats); q2_k: 32 int32 fields (16 scales, 16 mins), then d and dmin;
// q6_k: 16 int32 scales, then d.
inline constexpr int64_t kCodesK = 8 * 8 * 32;
inline constexpr int64_t kPackedQ4K = kCodesK + 2 * 8 * kLaneRows * 4 + 2 * kLaneRows * 4;
inline constexpr int64_t kPackedQ2K = kCodesK + 32 * kLaneRows * 4 + 2 * kLaneRows * 4;
inline constexpr int64_t kPackedQ6K = kCodesK + 16 * kLaneRows * 4 + kLaneRows * 4;

namespace {

/// The int32 field `field` of the rows, after the codes.
template <class V>
GLMRT_ALWAYS_INLINE typename V::I field_ints(const uint8_t* block, int field) {
  return V::load(block + (kCodesK + 32 * field) * V::kWiden);
}

/// Per row, a * (sum of x's first 16 inputs of group g) + b * (its last 16).
template <class V>
GLMRT_ALWAYS_INLINE typename V::I weighted_x_sums(typename V::I a, typename V::I b,
                                                  const GgmlColumn& x, int64_t g) {
  return V::add(V::mul(a, V::iset(x.sums16[2 * g])), V::mul(b, V::iset(x.sums16[2 * g + 1])));
}

/// q8_0 (kOffset 128: codes stored + 128) and q4_0 (kOffset 8).
template <class V, int kOffset, int C>
void meet_32(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, float* out) {
  meet_lanes<V, C>(blocks / 8, out, [&](int j, int64_t k, typename V::F(&acc)[C]) {
    const int64_t b = 8 * k + j;
    const uint8_t* block = packed + kPacked32 * V::kWiden * b;
    const typename V::F d = V::fload(block + 8 * 32 * V::kWiden);
    for (int c = 0; c < C; ++c) {
      typename V::I sums = chunk_sums<V>(block, x[c].values + 32 * b);
      const int x_sum = x[c].sums16[2 * b] + x[c].sums16[2 * b + 1];
      sums = V::sub(sums, V::iset(kOffset * x_sum));
      const typename V::F scale = V::fmul(d, V::fset(x[c].scales[b]));
      acc[c] = V::fmadd(V::to_float(sums), scale, acc[c]);
    }
  });
}

template <class V, int C>
struct MeetQ8_0 {
  static void run(const uint8_t* b, int64_t n, const GgmlColumn* x, float* o) {
    meet_32<V, 128, C>(b, n, x, o);
  }
};

template <class V, int C>
struct MeetQ4_0 {
  static void run(const uint8_t* b, int64_t n, const GgmlColumn* x, float* o) {
    meet_32<V, 8, C>(b, n, x, o);
  }
};

template <class V, int C>
struct MeetQ4K {
  static void run(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, float* out) {
    constexpr int W = V::kWiden;
    meet_lanes<V, C>(blocks, out, [&](int j, int64_t sb, typename V::F(&acc)[C]) {
      const uint8_t* block = packed + kPackedQ4K * W * sb;
      const uint8_t* floats = block + kCodesK * W;
      const typename V::F scales = V::fload(floats + 32 * W * j);
      const typename V::F mins = V::fload(floats + 32 * W * (8 + j));
      const typename V::F d = V::fload(floats + 32 * W * 16);
      const typename V::F dmin = V::fload(floats + 32 * W * 17);
      for (int c = 0; c < C; ++c) {
        const int64_t g = 8 * sb + j;  // the activations' 32-input group
        const typename V::I sums = chunk_sums<V>(block + 8 * 32 * W * j, x[c].values + 32 * g);
        acc[c] = q4_k_lane_step<V>(acc[c], sums, x[c], g, scales, mins, d, dmin);
      }
    });
  }
};

template <class V, int C>
struct MeetQ2K {
  static void run(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, float* out) {
    constexpr int W = V::kWiden;
    meet_lanes<V, C>(blocks, out, [&](int j, int64_t sb, typename V::F(&acc)[C]) {
      const uint8_t* block = packed + kPackedQ2K * W * sb;
      const typename V::I scale_a = field_ints<V>(block, 2 * j);
      const typename V::I scale_b = field_ints<V>(block, 2 * j + 1);
      const typename V::I min_a = field_ints<V>(block, 16 + 2 * j);
      const typename V::I min_b = field_ints<V>(block, 17 + 2 * j);
      const uint8_t* floats = block + (kCodesK + 32 * 32) * W;
      const typename V::F d = V::fload(floats), dmin = V::fload(floats + 32 * W);
      for (int c = 0; c < C; ++c) {
        const int64_t g = 8 * sb + j;  // the activations' 32-input group
        typename V::I first, second;
        half_sums<V>(block + 8 * 32 * W * j, x[c].values + 32 * g, first, second);
        const typename V::I codes = V::add(V::mul(first, scale_a), V::mul(second, scale_b));
        const typename V::I min_sums = weighted_x_sums<V>(min_a, min_b, x[c], g);
        const typename V::F dxs = V::fset(x[c].scales[g]);
        acc[c] = V::fmadd(V::fmul(V::to_float(codes), dxs), d, acc[c]);
        acc[c] = V::fnmadd(V::fmul(V::to_float(min_sums), dxs), dmin, acc[c]);
      }
    });
  }
};

template <class V, int C>
struct MeetQ6K {
  static void run(const uint8_t* packed, int64_t blocks, const GgmlColumn* x, float* out) {
    constexpr int W = V::kWiden;
    meet_lanes<V, C>(blocks, out, [&](int j, int64_t sb, typename V::F(&acc)[C]) {
      const uint8_t* block = packed + kPackedQ6K * W * sb;
      const typename V::I scale_a = field_ints<V>(block, 2 * j);
      const typename V::I scale_b = field_ints<V>(block, 2 * j + 1);
      const typename V::F d = V::fload(block + (kCodesK + 16 * 32) * W);
      for (int c = 0; c < C; ++c) {
        const int64_t g = 8 * sb + j;
        typename V::I first, second;
        half_sums<V>(block + 8 * 32 * W * j, x[c].values + 32 * g, first, second);
        // The -32 offset of every code, through the sums of x.
        const typename V::I offsets = weighted_x_sums<V>(scale_a, scale_b, x[c], g);
        const typename V::I net =
            V::sub(V::add(V::mul(first, scale_a), V::mul(second, scale_b)), V::shl5(offsets));
        acc[c] = V::fmadd(V::fmul(V::to_float(net), V::fset(x[c].scales[g])), d, acc[c]);
      }
    });
  }
};

/// The meet of a ggml type at width V, or null.
template <class V>
auto meet_of(uint32_t ggml_type) -> decltype(&meet_columns<V, MeetQ4K>) {
  switch (ggml_type) {
    case GLMRT_GGML_Q8_0:
      return &meet_columns<V, MeetQ8_0>;
    case GLMRT_GGML_Q4_0:
      return &meet_columns<V, MeetQ4_0>;
    case GLMRT_GGML_Q4_K:
      return &meet_columns<V, MeetQ4K>;
    case GLMRT_GGML_Q2_K:
      return &meet_columns<V, MeetQ2K>;
    case GLMRT_GGML_Q6_K:
      return &meet_columns<V, MeetQ6K>;
    default:
      return nullptr;
  }
}

}  // namespace
}  // namespace glmrt::kernels_avx2::lanes
