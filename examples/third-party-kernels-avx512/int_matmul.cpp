// Output rows go to threads in tiles of R weight rows; a tile meets the
// activation rows C at a time, so each weight row comes from RAM once for all
// S rows. Per 64-byte step and (row, activation row) the work is one or two
// VPDPBUSD, one conversion and one FMA with the lane scales; the int4 offset
// and the int8 unsigned shift ride in the VPDPBUSD start value.
#include "int_matmul.h"

#include "simd.h"

#include <algorithm>
#include <cstring>

namespace avx512_example {
namespace {

/// How far ahead of the current read a tile streaming from RAM asks for its
/// weights: the hardware prefetchers stop at 4 KiB pages.
constexpr int kPrefetchBytes = 4096;

struct Int8Vnni {
  static constexpr IntWeights kType = IntWeights::kInt8;
  static constexpr int kBlocksPerStep = 2;
  struct Row {
    simde__m512i w;
    simde__m512i start;  // -128 x the lane's weight sum: x is stored q + 128
  };
  static Row decode(const uint8_t* p) {
    const simde__m512i w = simde_mm512_loadu_si512(p);
    const simde__m512i shift = simde_mm512_dpbusd_epi32(
        simde_mm512_setzero_si512(), simde_mm512_set1_epi8(static_cast<char>(0x80)), w);
    return {w, simde_mm512_sub_epi32(simde_mm512_setzero_si512(), shift)};
  }
  static simde__m512i dot(const Row& row, const uint8_t* x, const int32_t* /*lane_starts*/) {
    return simde_mm512_dpbusd_epi32(row.start, simde_mm512_loadu_si512(x), row.w);
  }
};

struct Int4Vnni {
  static constexpr IntWeights kType = IntWeights::kInt4;
  static constexpr int kBlocksPerStep = 4;
  struct Row {
    simde__m512i low;   // even inputs, unsigned (v + 8)
    simde__m512i high;  // odd inputs
  };
  static Row decode(const uint8_t* p) {
    const simde__m512i bytes = simde_mm512_loadu_si512(p);
    const simde__m512i mask = simde_mm512_set1_epi8(0x0F);
    return {simde_mm512_and_si512(bytes, mask),
            simde_mm512_and_si512(simde_mm512_srli_epi16(bytes, 4), mask)};
  }
  static simde__m512i dot(const Row& row, const uint8_t* x, const int32_t* lane_starts) {
    const simde__m512i even = simde_mm512_dpbusd_epi32(simde_mm512_loadu_si512(lane_starts),
                                                       row.low, simde_mm512_loadu_si512(x));
    return simde_mm512_dpbusd_epi32(even, row.high, simde_mm512_loadu_si512(x + 64));
  }
};

/// R weight rows of one tile, the last partial step copied zero padded (rows
/// past O repeat the last row; their results are dropped).
template <int R>
struct RowTile {
  const uint8_t* row[R];
  const float* scales[R];
  int64_t full_steps;
  int64_t tail_bytes;
  alignas(64) uint8_t tail[R][kStepBytes];
};

/// Each lane's weight scale for a grouped format: the groups of the step's
/// blocks, spread over the lanes of each block.
template <class F>
simde__m512 weight_lane_scales(const float* row_scales, const int32_t* groups) {
  alignas(16) float block_scales[4] = {};
  for (int b = 0; b < F::kBlocksPerStep; ++b) block_scales[b] = row_scales[groups[b]];
  constexpr int kLanesPerBlock = kLanes / F::kBlocksPerStep;
  const simde__m512i lane_block = simde_mm512_setr_epi32(
      0 / kLanesPerBlock, 1 / kLanesPerBlock, 2 / kLanesPerBlock, 3 / kLanesPerBlock,
      4 / kLanesPerBlock, 5 / kLanesPerBlock, 6 / kLanesPerBlock, 7 / kLanesPerBlock,
      8 / kLanesPerBlock, 9 / kLanesPerBlock, 10 / kLanesPerBlock, 11 / kLanesPerBlock,
      12 / kLanesPerBlock, 13 / kLanesPerBlock, 14 / kLanesPerBlock, 15 / kLanesPerBlock);
  return simde_mm512_permutexvar_ps(lane_block,
                                    simde_mm512_broadcast_f32x4(simde_mm_load_ps(block_scales)));
}

template <int C>
struct Columns {
  const uint8_t* values[C];
  const float* scales[C];
  const int32_t* starts[C];
};

template <class F, bool kGrouped, int R, int C>
inline __attribute__((always_inline)) void accumulate_step(simde__m512 (&acc)[R][C],
                                                           const uint8_t* const (&w)[R],
                                                           const RowTile<R>& tile,
                                                           const Columns<C>& cols,
                                                           const IntMatmul& p, int64_t step) {
  constexpr int kPerStep = inputs_per_step(F::kType);
  typename F::Row rows[R];
  [[maybe_unused]] simde__m512 row_scale[R];
  for (int r = 0; r < R; ++r) rows[r] = F::decode(w[r]);
  if constexpr (kGrouped) {
    const int32_t* groups = p.block_group + step * F::kBlocksPerStep;
    for (int r = 0; r < R; ++r) row_scale[r] = weight_lane_scales<F>(tile.scales[r], groups);
  }
  for (int c = 0; c < C; ++c) {
    const simde__m512 x_scale = simde_mm512_loadu_ps(cols.scales[c] + step * kLanes);
    const uint8_t* x = cols.values[c] + step * kPerStep;
    const int32_t* starts = cols.starts[c] ? cols.starts[c] + step * kLanes : nullptr;
    for (int r = 0; r < R; ++r) {
      simde__m512 scale = x_scale;
      if constexpr (kGrouped) scale = simde_mm512_mul_ps(x_scale, row_scale[r]);
      acc[r][c] = simde_mm512_fmadd_ps(to_float(F::dot(rows[r], x, starts)), scale, acc[r][c]);
    }
  }
}

/// y for the tile's rows (from o0) and activation rows c0..c0+C-1. `stream`
/// is set on the first pass, which brings the tile's weights from RAM.
template <class F, bool kGrouped, int R, int C>
void run_columns(const IntMatmul& p, const RowTile<R>& tile, int64_t o0, int rows, int64_t c0) {
  const IntActivations& a = *p.x;
  constexpr int kPerStep = inputs_per_step(F::kType);
  Columns<C> cols;
  for (int c = 0; c < C; ++c) {
    const int64_t first = (c0 + c) * a.steps;
    cols.values[c] = a.values + first * kPerStep;
    cols.scales[c] = a.lane_scales + first * kLanes;
    cols.starts[c] = a.lane_starts ? a.lane_starts + first * kLanes : nullptr;
  }
  // Odd steps add into a second set of accumulators, whatever the tile: it
  // hides the FMA latency of small tiles, and every tile shape then sums a
  // row in the same order, so a row's result does not depend on S (32
  // registers hold both sets of the largest tile).
  simde__m512 acc[R][C];
  simde__m512 acc_odd[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = acc_odd[r][c] = simde_mm512_setzero_ps();
  auto& odd_target = acc_odd;
  const bool stream = c0 == 0;
  const uint8_t* w[R];
  int64_t step = 0;
  for (; step + 2 <= tile.full_steps; step += 2) {
    for (int r = 0; r < R; ++r) w[r] = tile.row[r] + step * kStepBytes;
    if (stream)
      for (int r = 0; r < R; ++r) {
        prefetch(w[r], kPrefetchBytes);
        prefetch(w[r], kPrefetchBytes + kStepBytes);
      }
    accumulate_step<F, kGrouped, R, C>(acc, w, tile, cols, p, step);
    for (int r = 0; r < R; ++r) w[r] += kStepBytes;
    accumulate_step<F, kGrouped, R, C>(odd_target, w, tile, cols, p, step + 1);
  }
  if (step < tile.full_steps) {
    for (int r = 0; r < R; ++r) w[r] = tile.row[r] + step * kStepBytes;
    accumulate_step<F, kGrouped, R, C>(acc, w, tile, cols, p, step);
  }
  if (tile.tail_bytes > 0) {
    for (int r = 0; r < R; ++r) w[r] = tile.tail[r];
    accumulate_step<F, kGrouped, R, C>(acc, w, tile, cols, p, tile.full_steps);
  }
  const int64_t O = p.w->rows;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < C; ++c) {
      const float dot = sum_lanes(simde_mm512_add_ps(acc[r][c], acc_odd[r][c]));
      p.y[(c0 + c) * O + o0 + r] = kGrouped ? dot : dot * p.w->scales[o0 + r];
    }
}

/// The last S % C activation rows, with a tile exactly that wide.
template <class F, bool kGrouped, int R, int C>
void run_remaining_columns(const IntMatmul& p, const RowTile<R>& tile, int64_t o0, int rows,
                           int64_t c0, int64_t remaining) {
  if constexpr (C > 1) {
    if (remaining == C - 1) {
      run_columns<F, kGrouped, R, C - 1>(p, tile, o0, rows, c0);
    } else {
      run_remaining_columns<F, kGrouped, R, C - 1>(p, tile, o0, rows, c0, remaining);
    }
  }
}

template <class F, bool kGrouped, int R, int C>
void run_tiles(void* context, int64_t begin, int64_t end) {
  const IntMatmul& p = *static_cast<const IntMatmul*>(context);
  const glmrt_weight_view& w = *p.w;
  const int64_t packed = glmrt::plugin::packed_row_bytes(w.format.element_type, w.cols);
  const int64_t groups = kGrouped ? (w.cols + w.format.group_size - 1) / w.format.group_size : 1;
  RowTile<R> tile;
  tile.full_steps = packed / kStepBytes;
  tile.tail_bytes = packed % kStepBytes;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t o0 = t * R;
    const int rows = static_cast<int>(std::min<int64_t>(R, w.rows - o0));
    for (int r = 0; r < R; ++r) {
      const int64_t o = o0 + std::min(r, rows - 1);
      tile.row[r] = static_cast<const uint8_t*>(w.data) + o * w.row_stride_bytes;
      tile.scales[r] = w.scales + o * groups;
      if (tile.tail_bytes > 0) {
        std::memset(tile.tail[r], 0, kStepBytes);
        std::memcpy(tile.tail[r], tile.row[r] + tile.full_steps * kStepBytes,
                    static_cast<size_t>(tile.tail_bytes));
      }
    }
    int64_t c0 = 0;
    for (; c0 + C <= p.S; c0 += C) run_columns<F, kGrouped, R, C>(p, tile, o0, rows, c0);
    if (c0 < p.S) run_remaining_columns<F, kGrouped, R, C>(p, tile, o0, rows, c0, p.S - c0);
  }
}

template <class F, bool kGrouped>
void dispatch(const glmrt_host_services& host, const IntMatmul& p) {
  // One weight row at S = 1 (a single sequential stream per thread); at S > 1,
  // 2 rows x 4 activation rows: 8 accumulators, each weight row reused 4 times.
  constexpr int kRows = 2, kCols = 4;
  auto* context = const_cast<IntMatmul*>(&p);
  if (p.S == 1) {
    host.parallel_for(host.context, p.w->rows, 16, &run_tiles<F, kGrouped, 1, 1>, context);
  } else {
    host.parallel_for(host.context, (p.w->rows + kRows - 1) / kRows, 8,
                      &run_tiles<F, kGrouped, kRows, kCols>, context);
  }
}

}  // namespace

void int_matmul(const glmrt_host_services& host, const IntMatmul& problem) {
  const bool grouped = problem.w->format.group_size > 0;
  if (problem.x->type == IntWeights::kInt8) {
    grouped ? dispatch<Int8Vnni, true>(host, problem) : dispatch<Int8Vnni, false>(host, problem);
  } else {
    grouped ? dispatch<Int4Vnni, true>(host, problem) : dispatch<Int4Vnni, false>(host, problem);
  }
}

}  // namespace avx512_example
