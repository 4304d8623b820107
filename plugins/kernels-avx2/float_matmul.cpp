// Float kernels. Same tiling as the integer ones: tiles of R weight rows per
// thread, each meeting the activation rows C at a time.
#include "float_matmul.h"

#include "dequantize.h"
#include "simd.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace glmrt::kernels_avx2 {
namespace {

constexpr int kRowsAtS1 = 4;
constexpr int kRows = 2;
constexpr int kCols = 4;
/// Dequantized rows per thread's scratch: the widest tile of either shape.
/// Indexed by this, not by the tile's own R: a grouped call runs S = 1 and
/// S > 1 products side by side, and slots counted in the tile's R made one
/// thread's 4-row tile overlap the next thread's 2-row tile (a race that
/// moved results with how a step's products were grouped).
constexpr int kScratchRowsPerThread = std::max(kRowsAtS1, kRows);

struct F32Row {
  using Element = float;
  static GLMRT_ALWAYS_INLINE __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
  static GLMRT_ALWAYS_INLINE float load1(const float* p) { return *p; }
};

struct Bf16Row {
  using Element = uint16_t;
  static GLMRT_ALWAYS_INLINE __m256 load8(const uint16_t* p) { return load_bf16x8(p); }
  static GLMRT_ALWAYS_INLINE float load1(const uint16_t* p) {
    return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int32_t>(*p) << 16)));
  }
};

template <class Row, int R, int C>
void dot_tile(const typename Row::Element* const (&w)[R], const float* const (&x)[C], int64_t cols,
              float (&out)[R][C]) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  // At S = 1 a tile streams its rows from RAM once. Rows shorter than a page
  // end their streams before the hardware prefetchers get going (kv_b's 512
  // inputs ran at half the read baseline), so those are asked for a page
  // ahead, once per 64-byte line; long rows do better without.
  constexpr int64_t kLineElements = 64 / sizeof(typename Row::Element);
  const bool stream =
      C == 1 && cols * static_cast<int64_t>(sizeof(typename Row::Element)) <= kPrefetchBytes;
  int64_t i = 0;
  for (; i + 8 <= cols; i += 8) {
    if (stream && i % kLineElements == 0)
      for (int r = 0; r < R; ++r) prefetch_ahead(w[r] + i);
    __m256 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Row::load8(w[r] + i);
    for (int c = 0; c < C; ++c) {
      const __m256 xv = _mm256_loadu_ps(x[c] + i);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm256_fmadd_ps(wv[r], xv, acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) out[r][c] = horizontal_sum(acc[r][c]);
  // An explicit fma: left to contraction, w * x + out was fused in some tile
  // shapes and not in others, and a row's result then depended on S.
  for (; i < cols; ++i) {
    for (int r = 0; r < R; ++r) {
      const float wi = Row::load1(w[r] + i);
      for (int c = 0; c < C; ++c) out[r][c] = std::fma(wi, x[c][i], out[r][c]);
    }
  }
}

template <class Row, int R, int C>
void run_columns(const FloatMatmul& p, const typename Row::Element* const (&w)[R], int64_t o0,
                 int rows, int64_t c0) {
  const int64_t I = p.weights->cols;
  const float* x[C];
  for (int c = 0; c < C; ++c) x[c] = p.x + (c0 + c) * p.x_stride;
  float out[R][C];
  dot_tile<Row, R, C>(w, x, I, out);
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < rows; ++r) p.y[(c0 + c) * p.y_stride + o0 + r] = out[r][c];
}

template <class Row, int R, int C>
void run_remaining_columns(const FloatMatmul& p, const typename Row::Element* const (&w)[R],
                           int64_t o0, int rows, int64_t c0, int64_t remaining) {
  if constexpr (C > 1) {
    if (remaining == C - 1) {
      run_columns<Row, R, C - 1>(p, w, o0, rows, c0);
    } else {
      run_remaining_columns<Row, R, C - 1>(p, w, o0, rows, c0, remaining);
    }
  }
}

/// Weight rows o0..o0+R-1 (rows past O repeat the last one), straight from the
/// view or dequantized into this thread's scratch.
template <class Row, bool kDequantize, int R>
void tile_rows(const FloatMatmul& p, int64_t o0, int rows, const typename Row::Element* (&w)[R]) {
  const glmrt_weight_view& view = *p.weights;
  // Two-level formats: a row's group scales (grown once per thread, then reused).
  thread_local std::vector<float> group_scales;
  if constexpr (kDequantize)
    if (plugin::is_two_level(view.format.element_type))
      group_scales.resize(
          static_cast<size_t>(view.cols / plugin::two_level_group(view.format.element_type) + 1));
  for (int r = 0; r < R; ++r) {
    const int64_t o = o0 + std::min(r, rows - 1);
    if constexpr (kDequantize) {
      float* scratch = p.dequant_scratch +
                       (int64_t{omp_get_thread_num()} * kScratchRowsPerThread + r) * p.dequant_cols;
      dequantize_row(view, o, scratch, group_scales.data());
      w[r] = scratch;
    } else {
      w[r] = reinterpret_cast<const typename Row::Element*>(static_cast<const uint8_t*>(view.data) +
                                                            o * view.row_stride_bytes);
    }
  }
}

template <class Row, bool kDequantize, int R, int C>
void run_tiles(const void* problem, int64_t first, int64_t end) {
  const FloatMatmul& p = *static_cast<const FloatMatmul*>(problem);
  for (int64_t t = first; t < end; ++t) {
    const int64_t o0 = t * R;
    const int rows = static_cast<int>(std::min<int64_t>(R, p.weights->rows - o0));
    const typename Row::Element* w[R];
    tile_rows<Row, kDequantize, R>(p, o0, rows, w);
    int64_t c0 = 0;
    for (; c0 + C <= p.S; c0 += C) run_columns<Row, R, C>(p, w, o0, rows, c0);
    if (c0 < p.S) run_remaining_columns<Row, R, C>(p, w, o0, rows, c0, p.S - c0);
  }
}

template <class Row, bool kDequantize, int R, int C>
TileJob tiles_of(const FloatMatmul& p) {
  const glmrt_weight_view& w = *p.weights;
  return {&run_tiles<Row, kDequantize, R, C>, &p, (w.rows + R - 1) / R, w.rows * w.cols * p.S};
}

template <class Row, bool kDequantize>
TileJob tiles_for_shape(const FloatMatmul& p) {
  if (p.S == 1) return tiles_of<Row, kDequantize, kRowsAtS1, 1>(p);
  return tiles_of<Row, kDequantize, kRows, kCols>(p);
}

}  // namespace

int64_t dequant_scratch_floats(int64_t cols, int n_threads) {
  return int64_t{kScratchRowsPerThread} * cols * std::max(n_threads, 1);
}

TileJob float_tiles(const FloatMatmul& problem) {
  switch (problem.weights->format.element_type) {
    case GLMRT_F32:
      return tiles_for_shape<F32Row, false>(problem);
    case GLMRT_BF16:
      return tiles_for_shape<Bf16Row, false>(problem);
    default:
      return tiles_for_shape<F32Row, true>(problem);
  }
}

}  // namespace glmrt::kernels_avx2
