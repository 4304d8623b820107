#include <glmrt/base/error.h>
#include <glmrt/base/parallel_work.h>
#include <glmrt/base/printable.h>
#include <glmrt/experts/expert_slot_fill.h>
#include <glmrt/model_files/non_finite.h>
#include <glmrt/weights/row_codec.h>
#include <glmrt/weights/stored_matrix.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <omp.h>

namespace glmrt {
namespace {

constexpr const char* kMatrixNames[3] = {"gate_proj", "up_proj", "down_proj"};

[[noreturn]] void fail_non_finite(const TensorInfo& t, std::span<const std::byte> bytes, int k,
                                  int64_t bad, int64_t cols, const ExpertSite& site) {
  const std::string at = cols > 1 ? fmt::format("row {}, column {}", bad / cols, bad % cols)
                                  : fmt::format("row {} (a scale)", bad);
  fail("expert tensor {} (layer {}, expert {}, {}) holds {} at {}, read from {} at offset {}",
       t.name, site.layer, site.id, kMatrixNames[k], non_finite_kind(t.dtype, bytes, bad), at,
       site.files->at(t.file_index).string(), t.offset + bad * dtype_size(t.dtype));
}

void check_scales(const ExpertTensorPlace& t, const std::byte* scales, int k,
                  const ExpertSite& site) {
  const std::span<const std::byte> bytes(scales, t.scales->byte_size);
  if (const int64_t bad = find_non_finite(DType::F32, bytes); bad >= 0)
    fail_non_finite(*t.scales, bytes, k, bad, 1, site);
}

/// A float tensor decoded row by row (a row at a time stays in cache between
/// the NaN scan, the decode and the packing) straight into the slot.
void convert_float_matrix(const ExpertTensorPlace& t, const SlotMatrix& m,
                          std::span<const std::byte> values, std::byte* slot,
                          std::span<float> row_scratch, int threads, int k,
                          const ExpertSite& site) {
  const auto row_source = static_cast<size_t>(t.values->row_bytes());
  const bool ggml = t.values->dtype == DType::GGML;
  std::atomic<int64_t> first_bad{std::numeric_limits<int64_t>::max()};
  const MatrixStorage dst{
      m.type,
      m.rows,
      m.cols,
      m.row_bytes,
      slot + m.data,
      plugin::is_quantized(m.type) ? reinterpret_cast<float*>(slot + m.scales) : nullptr,
      m.group_size};
  const int team = team_for(m.rows * m.cols, kMinParallelConvertedValues, threads);
#pragma omp parallel num_threads(team)
  {
    const int thread = omp_get_thread_num();
    std::span<float> row =
        row_scratch.subspan(static_cast<size_t>(thread * m.cols), static_cast<size_t>(m.cols));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < m.rows; ++r) {
      if (r * m.cols > first_bad.load(std::memory_order_relaxed)) continue;
      const auto source = values.subspan(static_cast<size_t>(r) * row_source, row_source);
      int64_t bad = -1;
      if (ggml) {
        // A GGUF's blocks: dequantized as ggml does, then scanned.
        dequantize_ggml_row(t.values->ggml_type, source, row);
        const auto it =
            std::find_if(row.begin(), row.end(), [](float v) { return !std::isfinite(v); });
        if (it != row.end()) bad = it - row.begin();
      } else {
        bad = decode_finite_to_f32(t.values->dtype, source, row);
      }
      if (bad >= 0) {
        int64_t index = r * m.cols + bad, seen = first_bad.load();
        while (index < seen && !first_bad.compare_exchange_weak(seen, index)) {
        }
        continue;
      }
      encode_row(row, dst, r);
    }
  }
  if (const int64_t bad = first_bad.load(); bad != std::numeric_limits<int64_t>::max()) {
    if (ggml)
      fail(
          "expert tensor {} (layer {}, expert {}, {}): its {} blocks of row {} dequantize to a "
          "value that is not finite at column {}, read from {}",
          t.values->name, site.layer, site.id, kMatrixNames[k], ggml_type_name(t.values->ggml_type),
          bad / m.cols, bad % m.cols, site.files->at(t.values->file_index).string());
    fail_non_finite(*t.values, values, k, bad, m.cols, site);
  }
}

/// Row-major index of the first value of ggml blocks `values` (rows of whole
/// blocks, back to back) that dequantizes to NaN or infinity, or -1. The
/// blocks are used as they are, so this is the one place a bad scale in them
/// can be caught; it reads the blocks' scales only (first_non_finite_ggml).
int64_t find_non_finite_blocks(const TensorInfo& t, std::span<const std::byte> values,
                               int64_t cols) {
  const int64_t rows = std::ssize(values) / t.row_bytes();
  return first_non_finite_ggml(t.ggml_type, values.first(static_cast<size_t>(rows * t.row_bytes())),
                               rows * cols);
}

[[noreturn]] void fail_non_finite_blocks(const TensorInfo& t, int64_t bad, int64_t cols, int k,
                                         const ExpertSite& site) {
  fail(
      "expert tensor {} (layer {}, expert {}, {}): its {} blocks of row {} dequantize to a value "
      "that is not finite at column {}, read from {}",
      printable(t.name), site.layer, site.id, kMatrixNames[k], ggml_type_name(t.ggml_type),
      bad / cols, bad % cols, site.files->at(t.file_index).string());
}

/// A matrix whose bytes the slot holds as stored (precision `stored`): checked.
void check_kept_matrix(const TensorInfo& t, const SlotMatrix& m, std::span<const std::byte> values,
                       int k, const ExpertSite& site) {
  if (t.dtype == DType::GGML) {
    if (const int64_t bad = find_non_finite_blocks(t, values, m.cols); bad >= 0)
      fail_non_finite_blocks(t, bad, m.cols, k, site);
    return;
  }
  if (const int64_t bad = find_non_finite(t.dtype, values); bad >= 0)
    fail_non_finite(t, values, k, bad, m.cols, site);
}

}  // namespace

void finish_direct_expert(const ExpertSlotPlan& plan, std::byte* slot, const ExpertSite& site) {
  for (const ScaleCopy& c : plan.scale_copies) std::memmove(slot + c.to, slot + c.from, c.bytes);
  for (int k = 0; k < 3; ++k) {
    const ExpertTensorPlace& t = plan.layout->tensors[k];
    const SlotMatrix& m = plan.matrices[k];
    if (t.scales) {
      check_scales(t, slot + m.scales, k, site);
      continue;
    }
    // Floats used in place: one scan, at memory speed; ggml blocks by their scales.
    const std::span<const std::byte> values(slot + m.data, t.values->byte_size);
    check_kept_matrix(*t.values, m, values, k, site);
  }
}

void convert_expert(const ExpertSlotPlan& plan, std::span<const std::byte> staging, std::byte* slot,
                    std::span<float> row_scratch, int threads, const ExpertSite& site) {
  for (int k = 0; k < 3; ++k) {
    const ExpertTensorPlace& t = plan.layout->tensors[k];
    const SlotMatrix& m = plan.matrices[k];
    const auto values = staging.subspan(m.source_values, t.values->byte_size);
    if (t.scales) {
      // Pre-quantized beside float ones: kept as stored.
      std::memcpy(slot + m.scales, staging.data() + m.source_scales, t.scales->byte_size);
      check_scales(t, slot + m.scales, k, site);
      std::memcpy(slot + m.data, values.data(), values.size());
      continue;
    }
    if (static_cast<int>(m.type) == kept_element_type(*t.values)) {
      // Kept as stored (precision `stored`), in a slot aligned as the kernels need.
      std::memcpy(slot + m.data, values.data(), values.size());
      check_kept_matrix(*t.values, m, values, k, site);
      continue;
    }
    convert_float_matrix(t, m, values, slot, row_scratch, threads, k, site);
  }
}

Expert expert_views(const ExpertSlotPlan& plan, const std::byte* slot) {
  Expert e;
  glmrt_weight_view* views[3] = {&e.gate, &e.up, &e.down};
  for (int k = 0; k < 3; ++k) {
    const SlotMatrix& m = plan.matrices[k];
    glmrt_weight_view& v = *views[k];
    v.format.struct_size = sizeof(glmrt_weight_format);
    v.format.element_type = m.type;
    v.format.group_size = m.group_size;
    v.format.packing = 0;
    v.format.alignment = 1;
    v.data = slot + m.data;
    v.scales =
        plugin::is_quantized(m.type) ? reinterpret_cast<const float*>(slot + m.scales) : nullptr;
    v.rows = m.rows;
    v.cols = m.cols;
    v.row_stride_bytes = m.row_bytes;
  }
  return e;
}

}  // namespace glmrt
