#include <glmrt/base/error.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_packing.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace glmrt {
namespace {

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

void pack_row(std::span<const float> w, uint32_t type, std::byte* out, float* scale) {
  switch (type) {
    case GLMRT_F32:
      std::memcpy(out, w.data(), w.size_bytes());
      return;
    case GLMRT_BF16: {
      for (size_t i = 0; i < w.size(); ++i) {
        const uint16_t bits = f32_to_bf16(w[i]);
        std::memcpy(out + 2 * i, &bits, 2);
      }
      return;
    }
    case GLMRT_I8:
    case GLMRT_I4:
    case GLMRT_I2:
      quantize_row(w, type, out, scale);
      return;
    default:
      fail("pack_row: unknown element type {}", type);
  }
}

void unpack_row(const glmrt_weight_view& v, int64_t r, std::span<float> out) {
  const auto* row = static_cast<const std::byte*>(v.data) + r * v.row_stride_bytes;
  const float s = v.scales ? v.scales[r] : 1.f;
  const auto* bytes = reinterpret_cast<const uint8_t*>(row);
  for (int64_t i = 0; i < v.cols; ++i) {
    switch (v.format.element_type) {
      case GLMRT_F32: {
        float f;
        std::memcpy(&f, row + 4 * i, 4);
        out[i] = f;
        break;
      }
      case GLMRT_BF16: {
        uint16_t h;
        std::memcpy(&h, row + 2 * i, 2);
        out[i] = glmrt::bf16_to_f32(h);  // qualified: model_files has one too
        break;
      }
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
