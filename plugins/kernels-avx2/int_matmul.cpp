// Integer-weight kernels. Output rows are split among threads in tiles of R
// weight rows; each tile meets every activation row C at a time, so a weight
// row comes from RAM once for all S rows and is re-read from L1/L2 after.
//
// Compiled twice (int_formats.h): as is, the maddubs build (namespace
// int_dots), and through int_matmul_vnni.cpp the vpdpbusd one (int_dots_vnni);
// int_tiles() picks one by IntMatmul::vnni. Everything else is the same code.
#include "int_matmul.h"

#include "int_formats.h"
#include "simd.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace glmrt::kernels_avx2 {
namespace {

/// R weight rows of one tile, with the partial last step copied zero padded
/// (rows past O repeat the last row; their results are dropped).
template <int R>
struct RowTile {
  const uint8_t* row[R];
  const float* scales[R];
  alignas(32) uint8_t tail[R][kMaxWeightBytesPerStep];
};

struct StepCounts {
  int64_t full_steps;   // steps read straight from the weight row
  int64_t tail_bytes;   // bytes of the last, partial step (0 = none)
  int64_t tail_values;  // values of the last, partial step
};

template <class Format, bool kGrouped, int R, int C>
GLMRT_ALWAYS_INLINE void accumulate_step(__m256 (&acc)[R][C], const uint8_t* const (&w)[R],
                                         const float* const (&w_scales)[R],
                                         const int8_t* const (&x)[C],
                                         const float* const (&x_scales)[C],
                                         const int32_t* block_group, int64_t step) {
  typename Format::Decoded decoded[R];
  [[maybe_unused]] __m256 row_scale[R];
  for (int r = 0; r < R; ++r) {
    decoded[r] = Format::decode(w[r]);
    if constexpr (kGrouped) row_scale[r] = Format::weight_scales(w_scales[r], block_group, step);
  }
  for (int c = 0; c < C; ++c) {
    const __m256 scale_x = Format::x_scales(x_scales[c] + step * Format::kScalesPerStep);
    const int8_t* xs = x[c] + step * Format::kElementsPerStep;
    for (int r = 0; r < R; ++r) {
      __m256 scale = scale_x;
      if constexpr (kGrouped) scale = _mm256_mul_ps(scale_x, row_scale[r]);
      acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(GLMRT_INT_DOTS::dot(decoded[r], xs)), scale,
                                  acc[r][c]);
    }
  }
}

/// Applies what the inner loop left out and stores y[c][o]: the per-row scale,
/// and for int4/int3/int2 the offset of the unsigned decoding. `scales` are
/// row o's group scales (grouped formats).
template <class Format, bool kGrouped>
GLMRT_ALWAYS_INLINE void store_output(const IntMatmul& p, int64_t o, int64_t c, float dot,
                                      [[maybe_unused]] const float* scales) {
  const glmrt_weight_view& w = *p.weights;
  const int64_t groups = p.activations.layout.groups;
  const float* group_sums = p.activations.group_sums + c * groups;
  float value = dot;
  if constexpr (kGrouped) {
    if constexpr (Format::kOffset != 0) {
      // Eight groups per fma, in an order that depends on the group count
      // alone (never on S or the tile): a serial chain over the groups of
      // every output and column took a third of an S = 16 product at 96
      // groups (int4-g64 at 6144 inputs), and two-level formats have twice
      // as many. Explicit fmas, here and below: contraction left to the
      // compiler may differ between the tile shapes this is inlined into.
      __m256 lanes = _mm256_setzero_ps();
      int64_t g = 0;
      for (; g + 8 <= groups; g += 8)
        lanes =
            _mm256_fmadd_ps(_mm256_loadu_ps(scales + g), _mm256_loadu_ps(group_sums + g), lanes);
      float offset_sum = horizontal_sum(lanes);
      for (; g < groups; ++g) offset_sum = std::fma(scales[g], group_sums[g], offset_sum);
      value = std::fma(-static_cast<float>(Format::kOffset), offset_sum, value);
    }
  } else {
    value = w.scales[o] * std::fma(-static_cast<float>(Format::kOffset), group_sums[0], value);
  }
  p.y[c * p.y_stride + o] = value;
}

/// y for the `rows` weight rows of `tile` (from o0) and activation rows
/// c0..c0+C-1: per row, the sum of (activation scale [x weight group scale]) x
/// int dot product of each step.
template <class Format, bool kGrouped, int R, int C>
void run_columns(const IntMatmul& p, const StepCounts& counts, const RowTile<R>& tile, int64_t o0,
                 int rows, int64_t c0) {
  const ActivationLayout& layout = p.activations.layout;
  const int8_t* x[C];
  const float* x_scales[C];
  for (int c = 0; c < C; ++c) {
    x[c] = p.activations.values + (c0 + c) * layout.row_bytes;
    x_scales[c] = p.activations.lane_scales + (c0 + c) * layout.scales_per_row;
  }
  // One accumulator per (row, column), summing the steps in order, whatever
  // the tile: a row's result must not depend on S (speculative decoding
  // compares a verified row with decoding it alone), and 16 registers cannot
  // hold a second set for the largest tile. Latency is hidden by the tile's
  // independent accumulators instead; at S = 1 by kRowsAtS1 rows.
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  // The first pass over a tile brings its weight rows from RAM; later passes
  // find them in cache.
  const bool stream = c0 == 0;
  const uint8_t* w[R];
  auto point_at = [&](int64_t step) {
    for (int r = 0; r < R; ++r) w[r] = tile.row[r] + step * Format::kBytesPerStep;
  };
  int64_t step = 0;
  for (; step + 2 <= counts.full_steps; step += 2) {  // two steps: a 64-byte line or more
    point_at(step);
    if (stream)
      for (int r = 0; r < R; ++r) {
        prefetch_ahead(w[r]);
        // Two int3 steps are 96 bytes: the second line needs asking too.
        if constexpr (2 * Format::kBytesPerStep > 64) prefetch_ahead(w[r] + 64);
      }
    accumulate_step<Format, kGrouped, R, C>(acc, w, tile.scales, x, x_scales, p.block_group, step);
    point_at(step + 1);
    accumulate_step<Format, kGrouped, R, C>(acc, w, tile.scales, x, x_scales, p.block_group,
                                            step + 1);
  }
  if (step < counts.full_steps) {
    point_at(step);
    accumulate_step<Format, kGrouped, R, C>(acc, w, tile.scales, x, x_scales, p.block_group, step);
  }
  if (counts.tail_bytes > 0) {
    for (int r = 0; r < R; ++r) w[r] = tile.tail[r];
    accumulate_step<Format, kGrouped, R, C>(acc, w, tile.scales, x, x_scales, p.block_group,
                                            counts.full_steps);
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < C; ++c)
      store_output<Format, kGrouped>(p, o0 + r, c0 + c, horizontal_sum(acc[r][c]), tile.scales[r]);
}

/// The last S % C activation rows, with a tile exactly that wide.
template <class Format, bool kGrouped, int R, int C>
void run_remaining_columns(const IntMatmul& p, const StepCounts& counts, const RowTile<R>& tile,
                           int64_t o0, int rows, int64_t c0, int64_t remaining) {
  if constexpr (C > 1) {
    if (remaining == C - 1) {
      run_columns<Format, kGrouped, R, C - 1>(p, counts, tile, o0, rows, c0);
    } else {
      run_remaining_columns<Format, kGrouped, R, C - 1>(p, counts, tile, o0, rows, c0, remaining);
    }
  }
}

template <class Format, bool kGrouped, int R, int C>
void run_row_tile(const IntMatmul& p, const StepCounts& counts, int64_t o0) {
  const glmrt_weight_view& w = *p.weights;
  const int64_t groups = p.activations.layout.groups;
  const int rows = static_cast<int>(std::min<int64_t>(R, w.rows - o0));
  const bool two_level = plugin::is_two_level(w.format.element_type);
  // Two-level formats: each row's group scales decoded once for the tile
  // (grown once per thread, then reused).
  thread_local std::vector<float> group_scales;
  if (two_level) group_scales.resize(static_cast<size_t>(R * groups));
  const int64_t blocks = (w.cols + plugin::kTwoLevelBlock - 1) / plugin::kTwoLevelBlock;
  RowTile<R> tile;
  for (int r = 0; r < R; ++r) {
    const int64_t o = o0 + std::min(r, rows - 1);
    tile.row[r] = static_cast<const uint8_t*>(w.data) + o * w.row_stride_bytes;
    if (two_level) {
      float* scales = group_scales.data() + r * groups;
      plugin::two_level_group_scales(w.format.element_type, tile.row[r], w.cols,
                                     w.scales + o * blocks, scales);
      tile.scales[r] = scales;
    } else {
      tile.scales[r] = w.scales + o * groups;
    }
    if (counts.tail_bytes > 0) {
      std::memset(tile.tail[r], 0, kMaxWeightBytesPerStep);
      Format::copy_tail(tile.row[r] + counts.full_steps * Format::kBytesPerStep, counts.tail_bytes,
                        counts.tail_values, tile.tail[r]);
    }
  }
  int64_t c0 = 0;
  for (; c0 + C <= p.S; c0 += C) run_columns<Format, kGrouped, R, C>(p, counts, tile, o0, rows, c0);
  if (c0 < p.S)
    run_remaining_columns<Format, kGrouped, R, C>(p, counts, tile, o0, rows, c0, p.S - c0);
}

template <class Format>
StepCounts step_counts(const glmrt_weight_view& w) {
  // The codes only: a two-level row's sub-scales follow them.
  const int64_t packed_bytes =
      plugin::packed_row_bytes(plugin::code_type(w.format.element_type), w.cols);
  StepCounts counts;
  counts.full_steps = w.cols / Format::kElementsPerStep;
  counts.tail_bytes = packed_bytes - counts.full_steps * Format::kBytesPerStep;
  counts.tail_values = w.cols - counts.full_steps * Format::kElementsPerStep;
  return counts;
}

template <class Format, bool kGrouped, int R, int C>
void run_tiles(const void* problem, int64_t first, int64_t end) {
  const IntMatmul& p = *static_cast<const IntMatmul*>(problem);
  const StepCounts counts = step_counts<Format>(*p.weights);
  for (int64_t tile = first; tile < end; ++tile)
    run_row_tile<Format, kGrouped, R, C>(p, counts, tile * R);
}

template <class Format, bool kGrouped, int R, int C>
TileJob tiles_of(const IntMatmul& p) {
  const glmrt_weight_view& w = *p.weights;
  return {&run_tiles<Format, kGrouped, R, C>, &p, (w.rows + R - 1) / R, w.rows * w.cols * p.S};
}

template <class Format, bool kGrouped>
TileJob tiles_for_shape(const IntMatmul& p) {
  if (p.S == 1) return tiles_of<Format, kGrouped, Format::kRowsAtS1, 1>(p);
  return tiles_of<Format, kGrouped, Format::kRows, Format::kCols>(p);
}

}  // namespace

namespace GLMRT_INT_DOTS {

template <class Format>
TileJob int_tiles(const IntMatmul& problem) {
  if (problem.weights->format.group_size > 0) return tiles_for_shape<Format, true>(problem);
  return tiles_for_shape<Format, false>(problem);
}

template TileJob int_tiles<Int8Format>(const IntMatmul&);
template TileJob int_tiles<Int4Format>(const IntMatmul&);
template TileJob int_tiles<Int2Format>(const IntMatmul&);
template TileJob int_tiles<Int3Format>(const IntMatmul&);

}  // namespace GLMRT_INT_DOTS

#if !defined(GLMRT_INT_DOTS_VNNI)
void fill_block_groups(int64_t cols, int64_t group_size, int64_t n_blocks, int32_t* block_group) {
  const int64_t last_group = (cols + group_size - 1) / group_size - 1;
  for (int64_t b = 0; b < n_blocks; ++b)
    block_group[b] = static_cast<int32_t>(std::min(b * kBlockSize / group_size, last_group));
}

template <class Format>
TileJob int_tiles(const IntMatmul& problem) {
  return problem.vnni ? int_dots_vnni::int_tiles<Format>(problem)
                      : int_dots::int_tiles<Format>(problem);
}

template TileJob int_tiles<Int8Format>(const IntMatmul&);
template TileJob int_tiles<Int4Format>(const IntMatmul&);
template TileJob int_tiles<Int2Format>(const IntMatmul&);
template TileJob int_tiles<Int3Format>(const IntMatmul&);
#endif

}  // namespace glmrt::kernels_avx2
