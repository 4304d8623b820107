#include <glmrt/base/error.h>
#include <glmrt/weights/matrix.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace glmrt {
namespace {

uint32_t element_type_for(WeightBits bits) {
  switch (bits) {
    case WeightBits::f32:
      return GLMRT_F32;
    case WeightBits::bf16:
      return GLMRT_BF16;
    case WeightBits::int8:
      return GLMRT_I8;
    case WeightBits::int4:
      return GLMRT_I4;
    case WeightBits::int2:
      return GLMRT_I2;
  }
  fail("unknown weight precision {}", static_cast<int>(bits));
}

// Symmetric quantization of one row: q = round(w / s) clamped to the type's
// range, s = max|w| / qmax (as the reference container does, so its files and
// ours agree bit for bit).
void quantize_row(std::span<const float> w, uint32_t type, std::byte* out, float* scale) {
  const int qmax = type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : 1;
  const int qmin = -qmax - 1;
  float amax = 0.f;
  for (float v : w) amax = std::max(amax, std::fabs(v));
  float s = std::max(amax / static_cast<float>(qmax), 1e-8f);
  *scale = s;
  auto q = [&](size_t i) {
    return std::clamp(static_cast<int>(std::lrintf(w[i] / s)), qmin, qmax);
  };
  const size_t n = w.size();
  if (type == GLMRT_I8) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(static_cast<int8_t>(q(i)));
  } else if (type == GLMRT_I4) {
    for (size_t i = 0; i < n; i += 2) {
      int lo = q(i) + 8, hi = i + 1 < n ? q(i + 1) + 8 : 8;
      out[i / 2] = static_cast<std::byte>(lo | (hi << 4));
    }
  } else {
    for (size_t i = 0; i < n; i += 4) {
      int byte = 0;
      for (size_t k = 0; k < 4; ++k) byte |= (i + k < n ? q(i + k) + 2 : 2) << (2 * k);
      out[i / 4] = static_cast<std::byte>(byte);
    }
  }
}

}  // namespace

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
    size_t not_finite = 0;  // f32 values above bf16's largest finite round to inf
    for (size_t i = 0; i < values.size(); ++i) {
      out[i] = f32_to_bf16(values[i]);
      not_finite += (out[i] & 0x7f80u) == 0x7f80u;
    }
    if (not_finite > 0) {
      size_t i = 0;
      while ((out[i] & 0x7f80u) != 0x7f80u) ++i;
      fail(
          "{}: {} of {} values are not finite in bf16, the first is {} at [{}, {}] (bf16's "
          "largest finite value is about 3.39e38)",
          category, not_finite, values.size(), values[i], static_cast<int64_t>(i) / cols,
          static_cast<int64_t>(i) % cols);
    }
  } else {
    m.scales_ = AlignedBlock(static_cast<size_t>(rows) * sizeof(float), 64, budget, category);
    float* scales = m.scales_.as<float>().data();
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      quantize_row(values.subspan(r * cols, cols), m.type_, dst + r * m.row_bytes_, &scales[r]);
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
  const std::byte* row = data_.data() + r * row_bytes_;
  const float s = scales_.size() ? scales_.as<const float>()[r] : 1.f;
  const auto* bytes = reinterpret_cast<const uint8_t*>(row);
  for (int64_t i = 0; i < cols_; ++i) {
    switch (type_) {
      case GLMRT_F32:
        out[i] = reinterpret_cast<const float*>(row)[i];
        break;
      case GLMRT_BF16:
        out[i] = bf16_to_f32(reinterpret_cast<const uint16_t*>(row)[i]);
        break;
      case GLMRT_I8:
        out[i] = static_cast<float>(static_cast<int8_t>(bytes[i])) * s;
        break;
      case GLMRT_I4:
        out[i] = static_cast<float>(((bytes[i / 2] >> (4 * (i & 1))) & 0xF) - 8) * s;
        break;
      default:
        out[i] = static_cast<float>(((bytes[i / 4] >> (2 * (i & 3))) & 0x3) - 2) * s;
    }
  }
}

}  // namespace glmrt
