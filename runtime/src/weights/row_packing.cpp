#include <glmrt/base/error.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>
#include <glmrt/weights/row_packing.h>

#include <cstring>

namespace glmrt {

void pack_row(std::span<const float> w, uint32_t type, std::byte* out, float* scale) {
  if (plugin::is_two_level(type))
    fail("pack_row: two-level {} has no per-row form", plugin::element_type_name(type));
  if (plugin::packed_row_bytes(type, 1) < 0) fail("pack_row: unknown element type {}", type);
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
  const uint32_t group = v.format.group_size;
  const float* row_scales =
      v.scales ? v.scales + r * MatrixStorage::scales_per_row_of(v.cols, group) : nullptr;
  const auto* bytes = reinterpret_cast<const uint8_t*>(row);
  if (plugin::is_ggml_blocks(v.format.element_type)) {
    const auto bytes_of_row = plugin::packed_row_bytes(v.format.element_type, v.cols);
    dequantize_ggml_row(plugin::ggml_type_of(v.format.element_type),
                        {row, static_cast<size_t>(bytes_of_row)}, out.first(v.cols));
    return;
  }
  if (plugin::is_two_level(v.format.element_type)) {
    SourceMatrix one;
    one.dtype = DType::U8;
    one.packed_type = v.format.element_type;
    one.data = {row, static_cast<size_t>(plugin::packed_row_bytes(one.packed_type, v.cols))};
    one.scales = {row_scales, static_cast<size_t>(MatrixStorage::scales_per_row_of(v.cols, group))};
    one.rows = 1;
    one.cols = v.cols;
    one.group_size = group;
    one.decode_row(0, out);
    return;
  }
  for (int64_t i = 0; i < v.cols; ++i) {
    const float s = row_scales ? row_scales[group ? i / group : 0] : 1.f;
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
      case GLMRT_I3:
        out[i] =
            static_cast<float>(static_cast<int>(plugin::int3_stored_code(bytes, v.cols, i)) - 4) *
            s;
        break;
      default:
        out[i] = static_cast<float>(((bytes[i / 4] >> (2 * (i & 3))) & 0x3) - 2) * s;
    }
  }
}

}  // namespace glmrt
