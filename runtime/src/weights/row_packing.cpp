#include <glmrt/base/error.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>
#include <glmrt/weights/row_packing.h>

#include <cstring>

namespace glmrt {

void pack_row(std::span<const float> w, uint32_t type, std::byte* out, float* scale) {
  if (type > GLMRT_I2) fail("pack_row: unknown element type {}", type);
  const MatrixStorage row{type,
                          1,
                          static_cast<int64_t>(w.size()),
                          plugin::packed_row_bytes(type, static_cast<int64_t>(w.size())),
                          out,
                          scale};
  encode_row(w, row, 0);
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
