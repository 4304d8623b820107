// The kernels of q4_k and q6_k rows packed in place (ggml_packed_rows.h has
// the layouts), written once for both widths (ggml_lane_vectors.h): Lanes8 meets
// one group of 8 rows (ggml_packed_rows.cpp), Lanes16 two groups side by
// side, `second` bytes apart (ggml_lanes_wide.cpp), each load taking the
// same piece of both. The same steps per row either way, so the same bits.
#pragma once

#include "ggml_lane_kernels.h"

namespace glmrt::kernels_avx2::lanes {

inline constexpr int kQ4KRunBytes = 256;  // one 32-byte run of nibbles of 8 rows
inline constexpr int kQ4KHeader = 128;    // a super-block's d, dmin and scale words
// q6_k: ql[0..31], ql[32..63], qh[0..31] of a half; a super-block's scales and d.
inline constexpr int kQ6KHalf = 3 * kQ4KRunBytes;
inline constexpr int kQ6KHeader = 16 * 8 + 2 * 8;

namespace {

/// The rows' 6-bit scale and min of sub-block j as floats, from the words
/// of their packed scales (lane i: row i), as ggml's get_scale_min_k4.
template <class V>
GLMRT_ALWAYS_INLINE void packed_scale_min(const typename V::I (&w)[3], int j, typename V::F& scale,
                                          typename V::F& min) {
  const typename V::I six = V::iset(0x3f), four = V::iset(0x0f), two = V::iset(0x03);
  typename V::I s, m;
  if (j < 4) {
    s = V::and_(V::srl32(w[0], 8 * j), six);
    m = V::and_(V::srl32(w[1], 8 * j), six);
  } else {
    const int k = 8 * (j - 4);
    s = V::or_(V::and_(V::srl32(w[2], k), four), V::sll32(V::and_(V::srl32(w[0], k + 6), two), 4));
    m = V::or_(V::and_(V::srl32(w[2], k + 4), four),
               V::sll32(V::and_(V::srl32(w[1], k + 6), two), 4));
  }
  scale = V::to_float(s);
  min = V::to_float(m);
}

template <class V, int C>
struct MeetPackedQ4K {
  using I = typename V::I;
  using F = typename V::F;

  /// Adds sub-block j of super-block sb (codes: its 8 chunks) to acc, as
  /// the row kernel's float step.
  GLMRT_ALWAYS_INLINE static void step(const I (&codes)[8], int64_t sb, int j, F scale, F min, F d,
                                       F dmin, const GgmlColumn* x, F (&acc)[C]) {
    const int64_t g = 8 * sb + j;  // the activations' 32-input group
    for (int c = 0; c < C; ++c)
      acc[c] = q4_k_lane_step<V>(acc[c], codes_sums<V>(codes, x[c].values + 32 * g), x[c], g, scale,
                                 min, d, dmin);
  }

  static void run(const uint8_t* group, int64_t second, int64_t blocks, const GgmlColumn* x,
                  float* out) {
    const uint8_t* headers = group + 4 * kQ4KRunBytes * blocks;
    const I low4 = V::bytes(0x0F);
    F f[C][8];
    // Partial sums 2q and 2q + 1 (a row kernel's lanes) gather side by
    // side, each over the super-blocks in order: the same sums as one at a time.
    for (int q = 0; q < 4; ++q) {
      F low[C], high[C];
      for (int c = 0; c < C; ++c) low[c] = high[c] = V::fzero();
      for (int64_t sb = 0; sb < blocks; ++sb) {
        const uint8_t* run = group + kQ4KRunBytes * (q * blocks + sb);
        for (int line = 0; line < kQ4KRunBytes; line += 64) {
          prefetch_ahead(run + line);
          if (V::kWiden > 1) prefetch_ahead(run + second + line);
        }
        const uint8_t* header = headers + kQ4KHeader * sb;
        const F d = V::halves_groups(header, second);
        const F dmin = V::halves_groups(header + 16, second);
        const I words[3] = {V::load_groups(header + 32, second),
                            V::load_groups(header + 64, second),
                            V::load_groups(header + 96, second)};
        I low_codes[8], high_codes[8];
        for (int k = 0; k < 8; ++k) {
          const I bytes = V::load_groups(run + 32 * k, second);
          low_codes[k] = V::and_(bytes, low4);
          high_codes[k] = V::and_(V::srl16(bytes, 4), low4);
        }
        F scale, min;
        packed_scale_min<V>(words, 2 * q, scale, min);
        step(low_codes, sb, 2 * q, scale, min, d, dmin, x, low);
        packed_scale_min<V>(words, 2 * q + 1, scale, min);
        step(high_codes, sb, 2 * q + 1, scale, min, d, dmin, x, high);
      }
      for (int c = 0; c < C; ++c) {
        f[c][2 * q] = low[c];
        f[c][2 * q + 1] = high[c];
      }
    }
    for (int c = 0; c < C; ++c) V::store(out + V::kRows * c, lane_totals<V>(f[c]));
  }
};

template <class V, int C>
struct MeetPackedQ6K {
  using I = typename V::I;
  using F = typename V::F;

  static void run(const uint8_t* group, int64_t second, int64_t blocks, const GgmlColumn* x,
                  float* out) {
    const uint8_t* headers = group + 2 * kQ6KHalf * blocks;
    const I low4 = V::bytes(0x0F), two = V::bytes(0x03);
    F f[C][8];
    // Half n holds sub-blocks 4n..4n+3 (a row kernel's lanes 4n..4n+3): they
    // gather side by side, each over the super-blocks in order.
    for (int n = 0; n < 2; ++n) {
      F acc[4][C];
      for (int k = 0; k < 4; ++k)
        for (int c = 0; c < C; ++c) acc[k][c] = V::fzero();
      for (int64_t sb = 0; sb < blocks; ++sb) {
        const uint8_t* half = group + kQ6KHalf * (n * blocks + sb);
        for (int line = 0; line < kQ6KHalf; line += 64) {
          prefetch_ahead(half + line);
          if (V::kWiden > 1) prefetch_ahead(half + second + line);
        }
        const uint8_t* header = headers + kQ6KHeader * sb;
        const F d = V::halves_groups(header + 128, second);
        for (int k = 0; k < 4; ++k) {
          const int j = 4 * n + k;  // the sub-block
          const I scale_a = V::int8s_groups(header + 8 * (2 * j), second);
          const I scale_b = V::int8s_groups(header + 8 * (2 * j + 1), second);
          const uint8_t* nibbles = half + kQ4KRunBytes * (k % 2);
          const uint8_t* highs = half + 2 * kQ4KRunBytes;
          I codes[8];
          for (int m = 0; m < 8; ++m) {
            const I bytes = V::load_groups(nibbles + 32 * m, second);
            const I low = k < 2 ? V::and_(bytes, low4) : V::and_(V::srl16(bytes, 4), low4);
            const I high = V::and_(V::srl16(V::load_groups(highs + 32 * m, second), 2 * k), two);
            codes[m] = V::or_(low, V::sll16(high, 4));
          }
          const int64_t g = 8 * sb + j;  // the activations' 32-input group
          for (int c = 0; c < C; ++c) {
            const int8_t* xs = x[c].values + 32 * g;
            I first = V::izero(), later = V::izero();
            for (int m = 0; m < 4; ++m) {
              first = V::dot(first, codes[m], xs + 4 * m);
              later = V::dot(later, codes[m + 4], xs + 16 + 4 * m);
            }
            // The -32 offset of every code, through the sums of x.
            const I offsets = V::add(V::mul(scale_a, V::iset(x[c].sums16[2 * g])),
                                     V::mul(scale_b, V::iset(x[c].sums16[2 * g + 1])));
            const I net =
                V::sub(V::add(V::mul(first, scale_a), V::mul(later, scale_b)), V::shl5(offsets));
            acc[k][c] = V::fmadd(V::fmul(V::to_float(net), V::fset(x[c].scales[g])), d, acc[k][c]);
          }
        }
      }
      for (int k = 0; k < 4; ++k)
        for (int c = 0; c < C; ++c) f[c][4 * n + k] = acc[k][c];
    }
    for (int c = 0; c < C; ++c) V::store(out + V::kRows * c, lane_totals<V>(f[c]));
  }
};

/// Meet<V, C>::run for 1 to kGgmlColumns activation rows.
template <class V, template <class, int> class Meet>
void meet_packed(const uint8_t* group, int64_t second, int64_t blocks, const GgmlColumn* x,
                 int columns, float* out) {
  with_columns(columns, [&](auto c) { Meet<V, c()>::run(group, second, blocks, x, out); });
}

}  // namespace
}  // namespace glmrt::kernels_avx2::lanes
