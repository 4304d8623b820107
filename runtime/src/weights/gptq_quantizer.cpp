// The column sweep of error-compensating rounding (gptq_quantizer.h).
#include <glmrt/base/cpu_features.h>
#include <glmrt/base/error.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/gptq_quantizer.h>
#include <glmrt/weights/group_quantizer.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace glmrt {
namespace {

// Rows swept together: each row of U is read from memory once per tile and
// reused from the cache for every row of it.
constexpr int64_t kGptqTileRows = 16;

[[gnu::always_inline]] inline void feed_error_loop(float* w, const float* u, float e, int64_t n) {
  for (int64_t k = 0; k < n; ++k) w[k] -= e * u[k];
}
GLMRT_TARGET_AVX2_FMA void feed_error_avx2(float* w, const float* u, float e, int64_t n) {
  feed_error_loop(w, u, e, n);
}
// w[0, n) -= e * u[0, n): the error of one column moved into the columns after it.
void feed_error_forward(float* w, const float* u, float e, int64_t n) {
  if (cpu_features().avx2_fma)
    feed_error_avx2(w, u, e, n);
  else
    feed_error_loop(w, u, e, n);
}

// How a format's scales cover a row.
struct GptqLayout {
  uint32_t code_type = 0;  // the packed codes' element type
  int64_t group = 0;       // inputs per scale (a row's width for per-row formats)
  int64_t segment = 0;     // inputs whose scales are chosen together
  int64_t scales_per_row = 0;
  bool two_level = false, per_row = false;
};

GptqLayout gptq_layout_of(const MatrixStorage& dst) {
  GptqLayout l;
  l.two_level = plugin::is_two_level(dst.type);
  l.per_row = !l.two_level && dst.group_size == 0;
  l.code_type = l.two_level ? plugin::code_type(dst.type) : dst.type;
  l.group = l.two_level ? plugin::two_level_group(dst.type)
                        : (l.per_row ? dst.cols : static_cast<int64_t>(dst.group_size));
  l.segment = l.two_level ? plugin::kTwoLevelBlock : l.group;
  l.scales_per_row = dst.scales_per_row();
  return l;
}

// Chooses the scales of inputs [first, end) of one row from its values `w` as
// they stand: each group's from the clipping search (weighted by H's
// diagonal); two-level, then the block's f32 scale and each group's code,
// as quantize_two_level does (without its refit: the sweep's codes are
// chosen for the scales as stored). Effective scales go to `group_scales`.
void choose_gptq_scales(const float* w, const GptqFactor& f, const MatrixStorage& dst,
                        const GptqLayout& l, int64_t row, int64_t first, int64_t end,
                        float* group_scales, std::vector<int8_t>& scratch) {
  float* stored = dst.scales + row * l.scales_per_row;
  scratch.resize(static_cast<size_t>(l.group));
  const int64_t g0 = first / l.group, g1 = (end + l.group - 1) / l.group;
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t at = g * l.group, count = std::min(l.group, dst.cols - at);
    group_scales[g] = quantize_group_searched(
        std::span(w + at, static_cast<size_t>(count)),
        std::span(f.diagonal.data() + at, static_cast<size_t>(count)), l.code_type, scratch.data());
  }
  if (!l.two_level) {
    for (int64_t g = g0; g < g1; ++g) stored[g] = group_scales[g];
    return;
  }
  auto* codes = reinterpret_cast<int8_t*>(dst.data + row * dst.row_bytes +
                                          plugin::packed_row_bytes(l.code_type, dst.cols));
  float largest = 0.f;
  for (int64_t g = g0; g < g1; ++g) largest = std::max(largest, std::fabs(group_scales[g]));
  const float d = largest > 0.f && std::isfinite(largest) ? largest / 127.f : 0.f;
  for (int64_t g = g0; g < g1; ++g) {
    const float c = d > 0.f ? std::clamp(std::nearbyint(group_scales[g] / d), -127.f, 127.f) : 0.f;
    codes[g] = static_cast<int8_t>(c);
    group_scales[g] = d * c;
  }
  stored[first / plugin::kTwoLevelBlock] = d > 0.f ? d : 1e-8f;
}

// One tile of rows [row0, row0 + count) of dst from `w` ([count, cols]).
void gptq_sweep_tile(float* w, int64_t count, const GptqFactor& f, const MatrixStorage& dst,
                     const GptqLayout& l, int64_t row0, GptqScales when, std::vector<int8_t>& codes,
                     std::vector<float>& scales, std::vector<int8_t>& scratch) {
  const int64_t cols = dst.cols, groups = (cols + l.group - 1) / l.group;
  const auto qmax = static_cast<float>(packed_qmax(l.code_type));
  codes.assign(static_cast<size_t>(count * cols), 0);
  scales.assign(static_cast<size_t>(count * groups), 0.f);
  for (int64_t r = 0; r < count; ++r) {
    float* row = w + r * cols;
    if (l.per_row) {
      // The seed's rule, from the row as given (per-row formats stay max-abs).
      float amax = 0.f;
      for (int64_t k = 0; k < cols; ++k) amax = std::max(amax, std::fabs(row[k]));
      scales[r] = std::max(amax / qmax, 1e-8f);
      dst.scales[row0 + r] = scales[r];
    } else if (when == GptqScales::before) {
      for (int64_t at = 0; at < cols; at += l.segment)
        choose_gptq_scales(row, f, dst, l, row0 + r, at, std::min(cols, at + l.segment),
                           scales.data() + r * groups, scratch);
    }
  }
  float err[kGptqTileRows];
  for (int64_t at = 0; at < cols; at += l.segment) {
    const int64_t end = std::min(cols, at + l.segment);
    if (!l.per_row && when == GptqScales::during)
      for (int64_t r = 0; r < count; ++r)
        choose_gptq_scales(w + r * cols, f, dst, l, row0 + r, at, end, scales.data() + r * groups,
                           scratch);
    for (int64_t j = at; j < end; ++j) {
      const float* u = f.upper.data() + j * cols;
      const int64_t g = j / l.group;
      for (int64_t r = 0; r < count; ++r) {
        // Scales may be negative (the search uses the extra negative level).
        const float s = scales[r * groups + g], v = w[r * cols + j];
        const float q = s != 0.f ? std::clamp(std::nearbyint(v / s), -qmax - 1.f, qmax) : 0.f;
        codes[r * cols + j] = static_cast<int8_t>(q);
        err[r] = (v - s * q) / u[j];
      }
      if (j + 1 < cols)
        for (int64_t r = 0; r < count; ++r)
          feed_error_forward(w + r * cols + j + 1, u + j + 1, err[r], cols - j - 1);
    }
  }
  for (int64_t r = 0; r < count; ++r)
    pack_row_codes(std::span(codes.data() + r * cols, static_cast<size_t>(cols)), l.code_type,
                   dst.data + (row0 + r) * dst.row_bytes);
}

}  // namespace

void gptq_encode_rows(std::span<float> rows, int64_t n, const GptqFactor& f,
                      const MatrixStorage& dst, int64_t first_row, GptqScales when) {
  if (!plugin::is_quantized(dst.type) || dst.scales == nullptr)
    fail("gptq_encode_rows: element type {} is no integer format with scales", dst.type);
  if (dst.cols != f.cols || static_cast<int64_t>(rows.size()) != n * f.cols ||
      static_cast<int64_t>(f.upper.size()) != f.cols * f.cols || first_row < 0 ||
      first_row + n > dst.rows)
    fail("gptq_encode_rows: {} rows of {} columns into rows {}.. of a {}x{} matrix, factor of {}",
         n, rows.size() / static_cast<size_t>(std::max<int64_t>(n, 1)), first_row, dst.rows,
         dst.cols, f.cols);
  const GptqLayout l = gptq_layout_of(dst);
#pragma omp parallel
  {
    const DenormalsAsZero flushed;
    std::vector<int8_t> codes, scratch;
    std::vector<float> scales;
#pragma omp for schedule(dynamic, 1)
    for (int64_t first = 0; first < n; first += kGptqTileRows)
      gptq_sweep_tile(rows.data() + first * f.cols, std::min(kGptqTileRows, n - first), f, dst, l,
                      first_row + first, when, codes, scales, scratch);
  }
}

}  // namespace glmrt
