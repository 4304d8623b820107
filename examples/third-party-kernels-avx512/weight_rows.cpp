#include "weight_rows.h"

#include <cstring>

namespace avx512_example {

void decode_row(const glmrt_weight_view& w, int64_t row, float* out) {
  const auto* bytes = static_cast<const uint8_t*>(w.data) + row * w.row_stride_bytes;
  const int64_t cols = w.cols;
  const int64_t group = w.format.group_size;
  const int64_t groups = group > 0 ? (cols + group - 1) / group : 1;
  const float* scales = w.scales ? w.scales + row * groups : nullptr;
  for (int64_t i = 0; i < cols; ++i) {
    const float scale = scales ? scales[group > 0 ? i / group : 0] : 1.0f;
    switch (w.format.element_type) {
      case GLMRT_F32:
        std::memcpy(&out[i], bytes + 4 * i, 4);
        break;
      case GLMRT_BF16: {
        uint16_t half;
        std::memcpy(&half, bytes + 2 * i, 2);
        const uint32_t bits = uint32_t{half} << 16;
        std::memcpy(&out[i], &bits, 4);
        break;
      }
      case GLMRT_I8:
        out[i] = static_cast<float>(static_cast<int8_t>(bytes[i])) * scale;
        break;
      case GLMRT_I4:  // element 2k in the low nibble, 2k+1 in the high; stored v + 8
        out[i] = static_cast<float>(((bytes[i >> 1] >> ((i & 1) * 4)) & 0x0F) - 8) * scale;
        break;
      case GLMRT_I2:  // element 4k+j in bits 2j..2j+1; stored v + 2
        out[i] = static_cast<float>(((bytes[i >> 2] >> ((i & 3) * 2)) & 0x03) - 2) * scale;
        break;
      default:
        out[i] = 0.0f;
    }
  }
}

}  // namespace avx512_example
