#include <glmrt/base/error.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_packing.h>

#include <algorithm>
#include <cmath>

namespace glmrt {

uint32_t element_type_for(WeightPrecision precision) {
  return weight_element_type(precision);
}

Matrix Matrix::allocate(uint32_t type, int64_t rows, int64_t cols, MemoryBudget* budget,
                        const std::string& category, uint32_t group_size) {
  Matrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.type_ = type;
  m.group_size_ = plugin::is_quantized(type) ? group_size : 0;
  m.row_bytes_ = plugin::packed_row_bytes(type, cols);
  if (m.row_bytes_ < 0 || rows < 0)
    fail("{}: cannot allocate a {}x{} matrix of element type {}", category, rows, cols, type);
  m.data_ = AlignedBlock(static_cast<size_t>(m.row_bytes_ * rows), 64, budget, category);
  if (plugin::is_quantized(type))
    m.scales_ = AlignedBlock(static_cast<size_t>(rows * m.scales_per_row()) * sizeof(float), 64,
                             budget, category);
  return m;
}

Matrix Matrix::allocate_for_direct_read(uint32_t type, int64_t rows, int64_t cols,
                                        uint64_t file_offset, MemoryBudget* budget,
                                        const std::string& category, uint32_t group_size) {
  Matrix m = allocate(type, rows, 0, budget, category);  // no data bytes
  m.cols_ = cols;
  m.group_size_ = plugin::is_quantized(type) ? group_size : 0;
  if (plugin::is_quantized(type))
    m.scales_ = AlignedBlock(static_cast<size_t>(rows * m.scales_per_row()) * sizeof(float), 64,
                             budget, category);
  m.row_bytes_ = plugin::packed_row_bytes(type, cols);
  const uint64_t bytes = static_cast<uint64_t>(m.row_bytes_ * rows);
  const uint64_t phase = file_offset % kDirectReadAlignment;
  // The aligned window around the bytes: from the block below their first
  // byte to the block boundary after their last.
  const uint64_t window =
      (phase + bytes + kDirectReadAlignment - 1) / kDirectReadAlignment * kDirectReadAlignment;
  m.data_ = AlignedBlock(window, kDirectReadAlignment, budget, category);
  m.data_offset_ = phase;
  return m;
}

MatrixStorage Matrix::storage() {
  MatrixStorage s{type_,      rows_,  cols_,
                  row_bytes_, data(), scales_.size() ? scales_.as<float>().data() : nullptr};
  s.group_size = group_size_;
  return s;
}

Matrix Matrix::from_f32(std::span<const float> values, int64_t rows, int64_t cols,
                        WeightPrecision precision, MemoryBudget* budget,
                        const std::string& category) {
  if (static_cast<int64_t>(values.size()) != rows * cols)
    fail("{}: {} values for a {}x{} matrix", category, values.size(), rows, cols);
  Matrix m = allocate(element_type_for(precision), rows, cols, budget, category, precision.group);
  const SourceMatrix src{DType::F32, 0, std::as_bytes(values), {}, rows, cols};
  convert_matrix(src, m.storage());
  if (m.type_ == GLMRT_BF16) {
    // f32 values above bf16's largest finite value (about 3.39e38) round to inf.
    const auto* stored = reinterpret_cast<const uint16_t*>(m.data_.data());
    size_t not_finite = 0, first = 0;
    for (size_t i = values.size(); i-- > 0;)
      if ((stored[i] & 0x7f80u) == 0x7f80u) ++not_finite, first = i;
    if (not_finite > 0)
      fail(
          "{}: {} of {} values are not finite in bf16, the first is {} at [{}, {}] (bf16's "
          "largest finite value is about 3.39e38)",
          category, not_finite, values.size(), values[first], static_cast<int64_t>(first) / cols,
          static_cast<int64_t>(first) % cols);
  }
  return m;
}

glmrt_weight_view Matrix::view() const {
  return view_rows(0, rows_);
}

glmrt_weight_view Matrix::view_rows(int64_t first, int64_t count) const {
  const int64_t end = first + count;
  if (packing_ != 0 &&
      (first % packed_group_rows_ != 0 || (end % packed_group_rows_ != 0 && end != rows_)))
    fail(
        "rows [{}, {}) of a {}x{} matrix packed in groups of {} rows: a view of packed rows "
        "starts and ends at a group's edge",
        first, end, rows_, cols_, packed_group_rows_);
  glmrt_weight_view v{};
  v.format.struct_size = sizeof(glmrt_weight_format);
  v.format.element_type = type_;
  v.format.group_size = group_size_;
  v.format.packing = packing_;
  v.format.alignment = 1;
  v.data = data() + first * row_bytes_;
  v.scales = scales_.size() ? scales_.as<const float>().data() + first * scales_per_row() : nullptr;
  v.rows = count;
  v.cols = cols_;
  v.row_stride_bytes = row_bytes_;
  return v;
}

void Matrix::dequantize_row(int64_t r, std::span<float> out) const {
  if (packing_ != 0)
    fail("row {} of a {}x{} matrix packed for the kernels plugin cannot be read back", r, rows_,
         cols_);
  unpack_row(view(), r, out);
}

void Matrix::set_packing(uint32_t packing, int64_t group_rows) {
  packing_ = packing;
  packed_group_rows_ = std::max<int64_t>(1, group_rows);
}

}  // namespace glmrt
