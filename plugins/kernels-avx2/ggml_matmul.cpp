#include "ggml_matmul.h"

#include "activation_quantizer.h"
#include "ggml_dots.h"
#include "ggml_lanes.h"
#include "ggml_packed_rows.h"
#include "ggml_row_pairs.h"
#include "simd.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace glmrt::kernels_avx2 {
namespace {

constexpr int64_t kGroup = 32;  // inputs per activation scale
/// Bytes of weight rows and of int8 activation rows one cache block holds:
/// both stay in L2 together while every pair of their rows meets.
constexpr int64_t kWeightBand = 64 * 1024;
constexpr int64_t kActivationPanel = 128 * 1024;
/// Activation rows from which a product packs its weight rows into lanes
/// (ggml_lanes.h): below, the packing costs more than it saves.
constexpr int64_t kLanesMinRows = 8;
/// Inputs one thread quantizes at a time, and the fewest worth waking a
/// second thread for (a decode step's take microseconds).
constexpr int64_t kQuantizePiece = 32 * 1024;
constexpr int64_t kMinParallelQuantize = int64_t{1} << 18;

/// Rows packed in place (ggml_packed_rows.h): tile t is group t, the rows
/// after the last whole group one tile each, one at a time.
void run_packed_tiles(const void* problem, int64_t first, int64_t end) {
  const GgmlMatmul& p = *static_cast<const GgmlMatmul*>(problem);
  const glmrt_weight_view& w = *p.weights;
  const uint32_t type = plugin::ggml_type_of(w.format.element_type);
  const GgmlKernel kernel = ggml_kernel(w.format.element_type, true);
  const int64_t I = w.cols, blocks = I / plugin::ggml_type_traits(type).block_values;
  const int64_t rows = p.S * p.passes;
  const int64_t whole = w.rows / kPackedGroupRows;
  const auto* data = static_cast<const uint8_t*>(w.data);
  GgmlColumn columns[kGgmlColumns];
  float out[kGgmlColumns * 2 * kPackedGroupRows];
  const auto put = [&](int64_t r, int64_t o, float value) {
    float& y = p.y[(r / p.passes) * p.y_stride + o];
    y = r % p.passes == 0 ? value : y + value;
  };
  // With AVX-512 VNNI, two groups side by side meet in one zmm at every S
  // (the same bits): the packed layout needs no packing per call.
  const bool pairs = p.wide_lanes && meets_packed_groups_wide(type);
  for (int64_t t = first; t < end;) {
    const bool group = t < whole;
    const bool pair = pairs && t + 1 < std::min(end, whole);
    const int64_t group_rows = pair ? 2 * kPackedGroupRows : kPackedGroupRows;
    const int64_t o = group ? t * kPackedGroupRows : whole * kPackedGroupRows + (t - whole);
    const uint8_t* at = data + o * w.row_stride_bytes;
    for (int64_t r = 0; r < rows; r += kGgmlColumns) {
      const int n = static_cast<int>(std::min<int64_t>(kGgmlColumns, rows - r));
      for (int c = 0; c < n; ++c)
        columns[c] = GgmlColumn{p.activations.values + (r + c) * I,
                                p.activations.scales + (r + c) * (I / kGroup),
                                p.activations.sums16 + (r + c) * (I / 16)};
      if (group) {
        if (pair)
          meet_packed_groups_wide(type, at, kPackedGroupRows * w.row_stride_bytes, blocks, columns,
                                  n, out);
        else
          meet_packed_group(type, at, blocks, columns, n, out);
        for (int c = 0; c < n; ++c)
          for (int i = 0; i < group_rows; ++i) put(r + c, o + i, out[group_rows * c + i]);
        continue;
      }
      for (int c = 0; c < n; ++c) {
        kernel.one(at, blocks, columns + c, out);
        put(r + c, o, out[0]);
      }
    }
    t += pair ? 2 : 1;
  }
}

void run_tiles(const void* problem, int64_t first, int64_t end) {
  const GgmlMatmul& p = *static_cast<const GgmlMatmul*>(problem);
  const glmrt_weight_view& w = *p.weights;
  const plugin::GgmlTypeTraits traits =
      plugin::ggml_type_traits(plugin::ggml_type_of(w.format.element_type));
  const int64_t I = w.cols, blocks = I / traits.block_values;
  const int64_t rows = p.S * p.passes;  // activation rows
  const auto* data = static_cast<const uint8_t*>(w.data);
  const auto column = [&](int64_t r) {
    return GgmlColumn{p.activations.values + r * I, p.activations.scales + r * (I / kGroup),
                      p.activations.sums16 + r * (I / 16)};
  };
  // Activation row r adds to output row r / passes, its first pass stored,
  // the others added in pass order: the same bits whatever the kernel width.
  const auto put = [&](int64_t r, int64_t o, float value) {
    float& y = p.y[(r / p.passes) * p.y_stride + o];
    y = r % p.passes == 0 ? value : y + value;
  };
  GgmlColumn columns[kGgmlColumns];
  // Activation rows [r, end) in whole groups through a kernel's wide width,
  // then a pair, the rest one at a time: `run(first, width, kernel)` with `columns`
  // filled. Each row's result is the same bits at every width.
  const auto by_widths = [&](int64_t r, int64_t end, const auto& kernels, const auto& run) {
    const auto group = [&](int n, const auto& kernel) {
      for (int c = 0; c < n; ++c) columns[c] = column(r + c);
      run(r, n, kernel);
      r += n;
    };
    while (r + kGgmlColumns <= end) group(kGgmlColumns, kernels.wide);
    if (r + 2 <= end) group(2, kernels.pair);
    while (r < end) group(1, kernels.one);
  };
  float out[kGgmlColumns];
  const GgmlKernel kernel = ggml_kernel(w.format.element_type, p.vnni);
  const auto meet = [&](const uint8_t* row, int64_t o, int64_t r, int64_t end) {
    by_widths(r, end, kernel, [&](int64_t at, int n, GgmlRowDot dot) {
      dot(row, blocks, columns, out);
      for (int c = 0; c < n; ++c) put(at + c, o, out[c]);
    });
  };
  // Two weight rows at once through one zmm (AVX-512 VNNI, ggml_row_pairs.h).
  const GgmlRowPairKernel row_pairs =
      p.wide_lanes ? ggml_row_pair_kernel(plugin::ggml_type_of(w.format.element_type))
                   : GgmlRowPairKernel{};
  const auto meet_two = [&](int64_t o, int64_t r, int64_t end) {
    const uint8_t* const two[2] = {data + o * w.row_stride_bytes,
                                   data + (o + 1) * w.row_stride_bytes};
    by_widths(r, end, row_pairs, [&](int64_t at, int n, GgmlRowPairDot dot) {
      float two_out[2 * kGgmlColumns];
      dot(two, blocks, columns, two_out);
      for (int c = 0; c < n; ++c)
        for (int h = 0; h < 2; ++h) put(at + c, o + h, two_out[2 * c + h]);
    });
  };
  // With the AVX-VNNI kernels and enough activation rows, each 8 weight rows
  // (16 with AVX-512 VNNI) are packed one per lane (ggml_lanes.h) once, in
  // this thread's scratch (at most ~300 KB at GLM-5's widths), and meet
  // every activation row; the rows left over go 8 at a time, then one at a
  // time below. The same bits every way.
  const auto run_lanes = [&](const GgmlLaneKernel& lanes) {
    const size_t packed_bytes = lanes.meet ? lanes.packed_bytes(blocks) : 0;
    if (packed_bytes == 0) return;
    thread_local std::vector<uint8_t> packed;
    packed.resize(packed_bytes);
    float lane_out[kGgmlColumns * kWideLaneRows];
    for (; first + lanes.rows <= end; first += lanes.rows) {
      lanes.pack(data + first * w.row_stride_bytes, w.row_stride_bytes, blocks, packed.data());
      for (int64_t r = 0; r < rows; r += kGgmlColumns) {
        const int n = static_cast<int>(std::min<int64_t>(kGgmlColumns, rows - r));
        for (int c = 0; c < n; ++c) columns[c] = column(r + c);
        lanes.meet(packed.data(), blocks, columns, n, lane_out);
        for (int c = 0; c < n; ++c)
          for (int i = 0; i < lanes.rows; ++i) put(r + c, first + i, lane_out[lanes.rows * c + i]);
      }
    }
  };
  if (p.vnni && rows >= kLanesMinRows) {
    const uint32_t type = plugin::ggml_type_of(w.format.element_type);
    if (p.wide_lanes) run_lanes(ggml_wide_lane_kernel(type));
    run_lanes(ggml_lane_kernel(type));
  }
  // Cache blocking: a band of weight rows (kWeightBand bytes, kept in L2)
  // meets a panel of activation rows (kActivationPanel bytes, also in L2)
  // before the next panel, so at large S every weight row is read from RAM
  // once and the activations from L2 instead of from L3 or RAM for every
  // weight row. Panels hold whole groups of kGgmlColumns rows and go in row
  // order, so an output's passes are still added in pass order.
  const int64_t row_bytes = blocks * traits.block_bytes;
  const int64_t band = std::max<int64_t>(1, kWeightBand / std::max<int64_t>(1, row_bytes));
  const int64_t panel = std::max<int64_t>(
      kGgmlColumns, kActivationPanel / std::max<int64_t>(1, I) / kGgmlColumns * kGgmlColumns);
  for (int64_t o0 = first; o0 < end; o0 += band) {
    const int64_t o1 = std::min(end, o0 + band);
    for (int64_t r0 = 0; r0 < rows; r0 += panel) {
      const int64_t r1 = std::min(rows, r0 + panel);
      int64_t o = o0;
      if (row_pairs.one)
        for (; o + 2 <= o1; o += 2) meet_two(o, r0, r1);
      for (; o < o1; ++o) meet(data + o * w.row_stride_bytes, o, r0, r1);
    }
  }
}

}  // namespace

bool has_ggml_int_kernel(uint32_t element_type) {
  return ggml_kernel(element_type, false).one != nullptr;
}

GgmlKernel ggml_kernel(uint32_t element_type, bool vnni) {
  if (!plugin::is_ggml_blocks(element_type)) return {};
  const uint32_t type = plugin::ggml_type_of(element_type);
  return vnni ? ggml_dots_vnni::kernel_of(type) : ggml_dots::kernel_of(type);
}

GgmlActivationBytes ggml_activation_bytes(int64_t S, int64_t cols) {
  return {static_cast<size_t>(S * cols), static_cast<size_t>(S * (cols / kGroup)) * sizeof(float),
          static_cast<size_t>(S * (cols / 16)) * sizeof(int16_t)};
}

void quantize_ggml_activations(const float* x, int64_t S, int64_t x_stride, int64_t cols,
                               int passes, const GgmlActivations& out) {
  alignas(32) float residual[kGroup];
  for (int64_t s = 0; s < S; ++s) {
    const float* row = x + s * x_stride;
    for (int64_t b = 0; b < cols / kGroup; ++b) {
      const float* block = row + b * kGroup;
      for (int pass = 0; pass < passes; ++pass) {
        const int64_t r = s * passes + pass;
        int8_t* q = out.values + r * cols + b * kGroup;
        const float scale = quantize_block32(block, q);
        out.scales[r * (cols / kGroup) + b] = scale;
        for (int half = 0; half < 2; ++half) {
          int sum = 0;
          for (int j = 0; j < 16; ++j) sum += q[16 * half + j];
          out.sums16[r * (cols / 16) + 2 * b + half] = static_cast<int16_t>(sum);
        }
        if (pass + 1 == passes) break;
        // What this pass's rounding left is the next pass's input.
        for (int j = 0; j < kGroup; ++j) residual[j] = block[j] - scale * static_cast<float>(q[j]);
        block = residual;
      }
    }
  }
}

void quantize_ggml(std::span<const GgmlQuantizeJob> jobs, int n_threads) {
  // Pieces of about kQuantizePiece inputs, whole input rows each.
  struct Piece {
    const GgmlQuantizeJob* job;
    int64_t first, end;  // input rows
  };
  // Grown once per calling thread; the team reads the caller's list.
  thread_local std::vector<Piece> caller_pieces;
  std::vector<Piece>& pieces = caller_pieces;
  pieces.clear();
  int64_t elements = 0;
  for (const GgmlQuantizeJob& job : jobs) {
    const int64_t rows = std::max<int64_t>(1, kQuantizePiece / std::max<int64_t>(1, job.cols));
    for (int64_t s = 0; s < job.S; s += rows)
      pieces.push_back({&job, s, std::min(job.S, s + rows)});
    elements += job.S * job.cols * job.passes;
  }
  const int64_t count = static_cast<int64_t>(pieces.size());
  const bool parallel = count > 1 && n_threads > 1 && elements >= kMinParallelQuantize;
#pragma omp parallel for schedule(dynamic) num_threads(n_threads) if (parallel)
  for (int64_t k = 0; k < count; ++k) {
    const Piece& piece = pieces[static_cast<size_t>(k)];
    const GgmlQuantizeJob& job = *piece.job;
    const int64_t r = piece.first * job.passes;  // first activation row
    const GgmlActivations out{job.out.values + r * job.cols,
                              job.out.scales + r * (job.cols / kGroup),
                              job.out.sums16 + r * (job.cols / 16)};
    quantize_ggml_activations(job.x + piece.first * job.x_stride, piece.end - piece.first,
                              job.x_stride, job.cols, job.passes, out);
  }
}

TileJob ggml_tiles(const GgmlMatmul& problem) {
  const glmrt_weight_view& w = *problem.weights;
  const int64_t work = w.rows * w.cols * problem.S * problem.passes;
  if (w.format.packing == kLanePacking) {
    const int64_t whole = w.rows / kPackedGroupRows;
    return {&run_packed_tiles, &problem, whole + (w.rows - whole * kPackedGroupRows), work};
  }
  return {&run_tiles, &problem, w.rows, work};
}

}  // namespace glmrt::kernels_avx2
