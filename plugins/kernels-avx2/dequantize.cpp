#include "dequantize.h"

#include "simd.h"

#include <ggml/ggml_blocks.h>

#include <algorithm>
#include <cstring>

namespace glmrt::kernels_avx2 {
namespace {

template <uint32_t kType>
int32_t code_at(const uint8_t* row, int64_t i) {
  if constexpr (kType == GLMRT_I8) return static_cast<int8_t>(row[i]);
  if constexpr (kType == GLMRT_I4) return ((row[i >> 1] >> ((i & 1) * 4)) & 0x0F) - 8;
  if constexpr (kType == GLMRT_I2) return ((row[i >> 2] >> ((i & 3) * 2)) & 0x03) - 2;
  return 0;
}

/// Element i of an int3 row of `cols` values.
int32_t int3_code_at(const uint8_t* row, int64_t cols, int64_t i) {
  return static_cast<int32_t>(plugin::int3_stored_code(row, cols, i)) - 4;
}

/// Codes i..i+7 as int32 (i a multiple of 8 for the packed types).
template <uint32_t kType>
GLMRT_ALWAYS_INLINE __m256i codes8(const uint8_t* row, int64_t i) {
  if constexpr (kType == GLMRT_I8) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + i)));
  } else if constexpr (kType == GLMRT_I4) {
    uint32_t word;
    std::memcpy(&word, row + i / 2, sizeof(word));
    const __m256i nibbles =
        _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int32_t>(word)),
                                           _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                         _mm256_set1_epi32(0x0F));
    return _mm256_sub_epi32(nibbles, _mm256_set1_epi32(8));
  } else {
    uint16_t word;
    std::memcpy(&word, row + i / 4, sizeof(word));
    const __m256i pairs = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(word), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
        _mm256_set1_epi32(0x03));
    return _mm256_sub_epi32(pairs, _mm256_set1_epi32(2));
  }
}

/// One row of `cols` codes with a scale per `group_size` values (0: one).
template <uint32_t kType>
void dequantize(const uint8_t* codes, int64_t cols, int64_t group_size, const float* scales,
                float* out) {
  const int64_t span = group_size > 0 ? group_size : cols;
  const int64_t groups = (cols + span - 1) / span;
  if constexpr (kType == GLMRT_I3) {
    // Only rows whose groups are not whole activation blocks come here (or
    // f32 activations): one value at a time.
    for (int64_t i = 0; i < cols; ++i)
      out[i] = static_cast<float>(int3_code_at(codes, cols, i)) * scales[i / span];
    return;
  }
  // Vector loads need every group to start on a whole byte of 8 codes.
  const bool vectorize = span % 8 == 0 || groups == 1;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t end = std::min(cols, (g + 1) * span);
    const float scale = scales[g];
    int64_t i = g * span;
    if (vectorize) {
      const __m256 scale8 = _mm256_set1_ps(scale);
      for (; i + 8 <= end; i += 8)
        _mm256_storeu_ps(out + i,
                         _mm256_mul_ps(_mm256_cvtepi32_ps(codes8<kType>(codes, i)), scale8));
    }
    for (; i < end; ++i) out[i] = static_cast<float>(code_at<kType>(codes, i)) * scale;
  }
}

}  // namespace

void dequantize_row(const glmrt_weight_view& w, int64_t row, float* out, float* group_scales) {
  const uint32_t type = w.format.element_type;
  const int64_t cols = w.cols;
  const uint8_t* codes = static_cast<const uint8_t*>(w.data) + row * w.row_stride_bytes;
  if (plugin::is_ggml_blocks(type)) {
    // The library's floats, bit for bit ggml's; cols was checked whole blocks.
    plugin_support::ggml::dequantize_row(plugin::ggml_type_of(type), codes, cols, out);
    return;
  }
  int64_t group_size = w.format.group_size;
  const int64_t scales_per_row = group_size > 0 ? (cols + group_size - 1) / group_size : 1;
  const float* scales = w.scales + row * scales_per_row;
  if (plugin::is_two_level(type)) {
    plugin::two_level_group_scales(type, codes, cols, scales, group_scales);
    scales = group_scales;
    group_size = plugin::two_level_group(type);
  }
  switch (plugin::code_type(type)) {
    case GLMRT_I8:
      dequantize<GLMRT_I8>(codes, cols, group_size, scales, out);
      break;
    case GLMRT_I4:
      dequantize<GLMRT_I4>(codes, cols, group_size, scales, out);
      break;
    case GLMRT_I2:
      dequantize<GLMRT_I2>(codes, cols, group_size, scales, out);
      break;
    case GLMRT_I3:
      dequantize<GLMRT_I3>(codes, cols, group_size, scales, out);
      break;
    default:
      break;
  }
}

}  // namespace glmrt::kernels_avx2
