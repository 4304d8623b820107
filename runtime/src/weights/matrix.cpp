#include <glmrt/base/error.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_packing.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace glmrt {

Matrix Matrix::from_f32(std::span<const float> values, int64_t rows, int64_t cols, WeightBits bits,
                        MemoryBudget* budget, const std::string& category) {
  if (static_cast<int64_t>(values.size()) != rows * cols)
    fail("{}: {} values for a {}x{} matrix", category, values.size(), rows, cols);
  Matrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.type_ = element_type_for(bits);
  m.row_bytes_ = plugin::packed_row_bytes(m.type_, cols);
  m.data_ = AlignedBlock(static_cast<size_t>(m.row_bytes_ * rows), 64, budget, category);
  std::byte* dst = m.data_.data();
  if (m.type_ == GLMRT_F32) {
    std::memcpy(dst, values.data(), values.size_bytes());
  } else if (m.type_ == GLMRT_BF16) {
    auto* out = reinterpret_cast<uint16_t*>(dst);
    for (size_t i = 0; i < values.size(); ++i) out[i] = f32_to_bf16(values[i]);
  } else {
    m.scales_ = AlignedBlock(static_cast<size_t>(rows) * sizeof(float), 64, budget, category);
    float* scales = m.scales_.as<float>().data();
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      pack_row(values.subspan(r * cols, cols), m.type_, dst + r * m.row_bytes_, &scales[r]);
  }
  return m;
}

Matrix Matrix::from_packed(uint32_t type, std::span<const std::byte> packed,
                           std::span<const float> scales, int64_t rows, int64_t cols,
                           MemoryBudget* budget, const std::string& category) {
  Matrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.type_ = type;
  m.row_bytes_ = plugin::packed_row_bytes(type, cols);
  if (m.row_bytes_ < 0 || static_cast<int64_t>(packed.size()) != m.row_bytes_ * rows)
    fail("{}: {} packed bytes do not hold a {}x{} matrix of element type {}", category,
         packed.size(), rows, cols, type);
  if (plugin::is_quantized(type) && static_cast<int64_t>(scales.size()) != rows)
    fail("{}: {} scales for {} rows", category, scales.size(), rows);
  m.data_ = AlignedBlock(packed.size(), 64, budget, category);
  std::memcpy(m.data_.data(), packed.data(), packed.size());
  if (plugin::is_quantized(type)) {
    m.scales_ = AlignedBlock(scales.size_bytes(), 64, budget, category);
    std::memcpy(m.scales_.data(), scales.data(), scales.size_bytes());
  }
  return m;
}

glmrt_weight_view Matrix::view() const {
  return view_rows(0, rows_);
}

glmrt_weight_view Matrix::view_rows(int64_t first, int64_t count) const {
  glmrt_weight_view v{};
  v.format.struct_size = sizeof(glmrt_weight_format);
  v.format.element_type = type_;
  v.format.group_size = 0;
  v.format.packing = 0;
  v.format.alignment = 1;
  v.data = data_.data() + first * row_bytes_;
  v.scales = scales_.size() ? scales_.as<const float>().data() + first : nullptr;
  v.rows = count;
  v.cols = cols_;
  v.row_stride_bytes = row_bytes_;
  return v;
}

void Matrix::dequantize_row(int64_t r, std::span<float> out) const {
  unpack_row(view(), r, out);
}

}  // namespace glmrt
