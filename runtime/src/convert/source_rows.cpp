#include <fcntl.h>
#include <glmrt/base/error.h>
#include <glmrt/convert/source_rows.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "../model_files/file_io.h"

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
  scale_cols_ = bc;
}

void SourceRows::read(int64_t first, int64_t count, std::span<float> out,
                      std::vector<std::byte>& raw) const {
  if (first < 0 || count < 0 || first + count > rows_ ||
      static_cast<int64_t>(out.size()) != count * cols_)
    fail("SourceRows::read: rows [{}, {}) of {} into {} floats", first, first + count, t_.name,
         out.size());
  raw.resize(static_cast<size_t>(count) * row_bytes_);
  const int fd = dir_.fd(t_.file_index);
  const uint64_t at = t_.offset + first * row_bytes_;
  model_files::pread_exact(fd, at, raw, dir_.files().at(t_.file_index),
                           fmt::format("tensor '{}'", t_.name));
  // The drive reads the next block while this one is encoded; the bytes just
  // read are not needed again and leave the page cache to others.
  const uint64_t end = t_.offset + t_.byte_size, next = at + raw.size();
  if (next < end)
    ::posix_fadvise(fd, static_cast<off_t>(next),
                    static_cast<off_t>(std::min<uint64_t>(raw.size(), end - next)),
                    POSIX_FADV_WILLNEED);
  ::posix_fadvise(fd, static_cast<off_t>(at), static_cast<off_t>(raw.size()), POSIX_FADV_DONTNEED);
  if (t_.dtype != DType::F8_E4M3) {
    decode_to_f32(t_.dtype, raw, out);
    return;
  }
  float table[256];
  for (int b = 0; b < 256; ++b) table[b] = f8_e4m3_to_f32(static_cast<uint8_t>(b));
  const auto* bytes = reinterpret_cast<const uint8_t*>(raw.data());
  for (int64_t r = 0; r < count; ++r) {
    const float* block_row = scales_.data() + ((first + r) / block_[0]) * scale_cols_;
    for (int64_t c = 0; c < cols_; ++c)
      out[r * cols_ + c] = table[bytes[r * cols_ + c]] * block_row[c / block_[1]];
  }
}

}  // namespace glmrt
