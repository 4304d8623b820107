#include <glmrt/base/error.h>
#include <glmrt/convert/source_rows.h>
#include <glmrt/model_files/non_finite.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "bf16_rows.h"
#include "source_block_reader.h"

namespace glmrt {

float f8_e4m3_to_f32(uint8_t bits) {
  const int sign = bits >> 7, exponent = (bits >> 3) & 0xF, mantissa = bits & 0x7;
  float v;
  if (exponent == 0xF && mantissa == 0x7)
    v = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    v = std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m/8 * 2^-6
  else
    v = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  return sign ? -v : v;
}

SourceRows::SourceRows(const TensorDirectory& dir, const TensorInfo& t,
                       const TensorInfo* block_scales, std::array<int64_t, 2> block)
    : dir_(dir), t_(t), block_(block) {
  const auto& file = dir.files().at(t.file_index);
  if (t.shape.size() != 2)
    fail("tensor {} in {}: a matrix must be 2-D, found shape [{}]", t.name, file,
         fmt::join(t.shape, ", "));
  rows_ = t.shape[0];
  cols_ = t.shape[1];
  const bool fp8 = t.dtype == DType::F8_E4M3;
  if (!fp8 && !is_float_dtype(t.dtype))
    fail(
        "tensor {} in {} is {}: convert reads matrices stored as F32, BF16, F16, F64 or F8_E4M3 "
        "(with block scales {})",
        t.name, file, dtype_name(t.dtype), t.name + "_scale_inv");
  row_bytes_ = static_cast<uint64_t>(cols_) * dtype_size(t.dtype);
  if (!fp8) {
    if (block_scales)
      fail("tensor {} in {} is {} but has FP8 block scales {}", t.name, file, dtype_name(t.dtype),
           block_scales->name);
    return;
  }
  if (!block_scales)
    fail("tensor {} in {} is F8_E4M3 but its block scales {}_scale_inv are missing", t.name, file,
         t.name);
  const int64_t br = (rows_ + block_[0] - 1) / block_[0], bc = (cols_ + block_[1] - 1) / block_[1];
  if (block_scales->shape != std::vector<int64_t>{br, bc})
    fail(
        "tensor {} in {}: block scales for a [{}, {}] matrix in {}x{} blocks have shape [{}, {}], "
        "found [{}]",
        block_scales->name, dir.files().at(block_scales->file_index), rows_, cols_, block_[0],
        block_[1], br, bc, fmt::join(block_scales->shape, ", "));
  scales_ = dir.read_f32(*block_scales);
  for (int b = 0; b < 256; ++b) fp8_table_[b] = f8_e4m3_to_f32(static_cast<uint8_t>(b));
  scale_cols_ = bc;
}

std::span<const std::byte> SourceRows::read_raw(SourceBlockReader& reader, int slot, int64_t first,
                                                int64_t count) const {
  if (first < 0 || count < 0 || first + count > rows_)
    fail("SourceRows::read_raw: rows [{}, {}) of {} ({} rows)", first, first + count, t_.name,
         rows_);
  return reader.read(slot, t_, first * row_bytes_, count * row_bytes_);
}

bool SourceRows::decode_row(std::span<const std::byte> raw, int64_t first, int64_t r,
                            std::span<float> out) const {
  if (static_cast<int64_t>(out.size()) != cols_ ||
      static_cast<uint64_t>(r + 1) * row_bytes_ > raw.size())
    fail("SourceRows::decode_row: row {} of {} into {} floats", first + r, t_.name, out.size());
  const std::span<const std::byte> row = raw.subspan(r * row_bytes_, row_bytes_);
  if (t_.dtype == DType::BF16) return widen_bf16_row(row, out);
  if (t_.dtype != DType::F8_E4M3) {
    decode_to_f32(t_.dtype, row, out);
    return find_non_finite(t_.dtype, row) < 0;
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(row.data());
  const float* block_row = scales_.data() + ((first + r) / block_[0]) * scale_cols_;
  uint32_t non_finite = 0;
  for (int64_t c = 0; c < cols_; ++c) {
    out[c] = fp8_table_[bytes[c]] * block_row[c / block_[1]];
    non_finite |= !(std::fabs(out[c]) <= std::numeric_limits<float>::max());
  }
  return non_finite == 0;
}

}  // namespace glmrt
