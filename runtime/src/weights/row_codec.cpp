#include <glmrt/base/error.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace glmrt {
namespace {

int qmax_of(uint32_t type) {
  return type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : 1;
}

void quantize_row(std::span<const float> w, uint32_t type, std::byte* out, float* scale) {
  const int qmax = qmax_of(type);
  const int qmin = -qmax - 1;
  float amax = 0.f;
  for (float v : w) amax = std::max(amax, std::fabs(v));
  const float s = std::max(amax / static_cast<float>(qmax), 1e-8f);
  *scale = s;
  auto q = [&](size_t i) {
    return std::clamp(static_cast<int>(std::lrintf(w[i] / s)), qmin, qmax);
  };
  const size_t n = w.size();
  if (type == GLMRT_I8) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(static_cast<int8_t>(q(i)));
  } else if (type == GLMRT_I4) {
    for (size_t i = 0; i < n; i += 2) {
      const int lo = q(i) + 8, hi = i + 1 < n ? q(i + 1) + 8 : 8;
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

void decode_packed_row(const uint8_t* bytes, uint32_t type, float s, std::span<float> out) {
  const size_t n = out.size();
  switch (type) {
    case GLMRT_I8:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int8_t>(bytes[i])) * s;
      return;
    case GLMRT_I4:
      for (size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(((bytes[i / 2] >> (4 * (i & 1))) & 0xF) - 8) * s;
      return;
    case GLMRT_I2:
      for (size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(((bytes[i / 4] >> (2 * (i & 3))) & 0x3) - 2) * s;
      return;
    default:
      fail("decode_packed_row: element type {} is not a packed integer type", type);
  }
}

}  // namespace

int64_t SourceMatrix::row_bytes() const {
  if (dtype == DType::U8) return plugin::packed_row_bytes(packed_type, cols);
  return cols * static_cast<int64_t>(dtype_size(dtype));
}

void SourceMatrix::check(std::string_view what) const {
  const bool packed = dtype == DType::U8;
  if (!packed && !is_float_dtype(dtype))
    fail("{}: dtype {} is neither a float type nor packed U8", what, dtype_name(dtype));
  if (packed && (packed_type < GLMRT_I8 || packed_type > GLMRT_I2))
    fail("{}: packed element type {} is not int8, int4 or int2", what, packed_type);
  if (static_cast<int64_t>(data.size()) != rows * row_bytes())
    fail("{}: {} bytes do not hold a {}x{} matrix ({} bytes per row)", what, data.size(), rows,
         cols, row_bytes());
  if (packed && static_cast<int64_t>(scales.size()) != rows)
    fail("{}: {} scales for {} rows", what, scales.size(), rows);
}

void SourceMatrix::decode_row(int64_t r, std::span<float> out) const {
  const auto row = data.subspan(static_cast<size_t>(r * row_bytes()), row_bytes());
  if (dtype == DType::U8) {
    decode_packed_row(reinterpret_cast<const uint8_t*>(row.data()), packed_type, scales[r], out);
  } else {
    decode_to_f32(dtype, row, out);
  }
}

void encode_row(std::span<const float> values, const MatrixStorage& dst, int64_t r) {
  std::byte* out = dst.data + r * dst.row_bytes;
  switch (dst.type) {
    case GLMRT_F32:
      std::memcpy(out, values.data(), values.size_bytes());
      return;
    case GLMRT_BF16: {
      auto* bits = reinterpret_cast<uint16_t*>(out);
      for (size_t i = 0; i < values.size(); ++i) bits[i] = f32_to_bf16(values[i]);
      return;
    }
    default:
      quantize_row(values, dst.type, out, &dst.scales[r]);
  }
}

void convert_rows(const SourceMatrix& src, const MatrixStorage& dst) {
  // Checked here: an exception cannot leave the parallel region below.
  src.check("convert_rows");
  if (src.rows != dst.rows || src.cols != dst.cols)
    fail("convert_rows: a {}x{} source into a {}x{} matrix", src.rows, src.cols, dst.rows,
         dst.cols);
  if (dst.row_bytes != plugin::packed_row_bytes(dst.type, dst.cols) ||
      (plugin::is_quantized(dst.type) && dst.scales == nullptr))
    fail("convert_rows: destination of element type {} is not laid out for {} columns", dst.type,
         dst.cols);
#pragma omp parallel
  {
    std::vector<float> row(static_cast<size_t>(src.cols));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < src.rows; ++r) {
      src.decode_row(r, row);
      encode_row(row, dst, r);
    }
  }
}

}  // namespace glmrt
