#include <glmrt/base/cpu_features.h>
#include <glmrt/base/error.h>
#include <glmrt/plugin/ggml_types.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/group_quantizer.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "round_small.h"

namespace glmrt {
namespace {

// Rows are quantized in pieces of this many values: q is computed for a piece
// in a loop the compiler vectorizes, then packed.
constexpr size_t kPiece = 256;

// q = round(w / s) clamped to [qmin, qmax], exactly as lrintf + clamp (round
// to nearest even), with NaN giving 0 as lrintf's result did after the cast;
// written with floats so it vectorizes. |w / s| <= qmax + 1: round_small's
// range.
[[gnu::always_inline]] inline void quantize_piece(const float* w, size_t n, float s, float qmin,
                                                  float qmax, int8_t* q) {
  for (size_t i = 0; i < n; ++i) {
    float r = round_small(w[i] / s);
    r = r == r ? r : 0.f;
    r = r < qmin ? qmin : r;
    r = r > qmax ? qmax : r;
    q[i] = static_cast<int8_t>(r);
  }
}

// Packs the codes q[0, n) of GLMRT_I3 blocks (weight_format.h) into `out`:
// every block holds 128 values but the last, which holds what is left. Bits
// past the last value hold the code of zero.
[[gnu::always_inline]] inline void pack_int3_blocks(const int8_t* q, size_t n, uint8_t* out) {
  constexpr auto kBlock = static_cast<size_t>(plugin::kInt3BlockValues);
  for (size_t first = 0; first < n; first += kBlock) {
    const size_t count = std::min(kBlock, n - first);
    const int8_t* codes = q + first;
    uint8_t* low = out + first / kBlock * plugin::kInt3BlockBytes;
    uint8_t* high = low + plugin::int3_high_offset(static_cast<int64_t>(count));
    for (size_t k = 0; k < (count + 3) / 4; ++k) {
      int byte = 0;
      for (size_t j = 0; j < 4; ++j) {
        const size_t i = 4 * k + j;
        byte |= ((i < count ? codes[i] + 4 : 4) & 0x3) << (2 * j);
      }
      low[k] = static_cast<uint8_t>(byte);
    }
    for (size_t k = 0; k < (count + 7) / 8; ++k) {
      int byte = 0;
      for (size_t j = 0; j < 8; ++j) {
        const size_t i = 8 * k + j;
        byte |= (((i < count ? codes[i] + 4 : 4) >> 2) & 0x1) << j;
      }
      high[k] = static_cast<uint8_t>(byte);
    }
  }
}

// Packs codes q[0, n) into row bytes starting at value `first` (even for
// int4, a multiple of 4 for int2, of 128 for int3, where q[0, n) must then end
// the row or end on a whole block).
[[gnu::always_inline]] inline void pack_codes_loops(const int8_t* q, size_t n, uint32_t type,
                                                    uint8_t* bytes, size_t first) {
  // Whole bytes first, in loops without branches (they vectorize), then the
  // partial last byte padded with the code of zero.
  if (type == GLMRT_I3) {
    pack_int3_blocks(q, n, bytes + first / plugin::kInt3BlockValues * plugin::kInt3BlockBytes);
  } else if (type == GLMRT_I8) {
    std::memcpy(bytes + first, q, n);
  } else if (type == GLMRT_I4) {
    uint8_t* out = bytes + first / 2;
    const size_t whole = n / 2;
    for (size_t k = 0; k < whole; ++k)
      out[k] = static_cast<uint8_t>((q[2 * k] + 8) | ((q[2 * k + 1] + 8) << 4));
    if (n % 2) out[whole] = static_cast<uint8_t>((q[n - 1] + 8) | (8 << 4));
  } else {
    uint8_t* out = bytes + first / 4;
    const size_t whole = n / 4;
    for (size_t k = 0; k < whole; ++k)
      out[k] = static_cast<uint8_t>((q[4 * k] + 2) | ((q[4 * k + 1] + 2) << 2) |
                                    ((q[4 * k + 2] + 2) << 4) | ((q[4 * k + 3] + 2) << 6));
    if (n % 4) {
      int byte = 0;
      for (size_t k = 0; k < 4; ++k) {
        const size_t i = 4 * whole + k;
        byte |= (i < n ? q[i] + 2 : 2) << (2 * k);
      }
      out[whole] = static_cast<uint8_t>(byte);
    }
  }
}

[[gnu::always_inline]] inline void quantize_row_loops(std::span<const float> w, uint32_t type,
                                                      std::byte* out, float* scale) {
  const int qmax = packed_qmax(type);
  float amax = 0.f;  // max is order-free: the simd reduction gives the same value
#pragma omp simd reduction(max : amax)
  for (size_t i = 0; i < w.size(); ++i) amax = std::max(amax, std::fabs(w[i]));
  const float s = std::max(amax / static_cast<float>(qmax), 1e-8f);
  *scale = s;
  auto* bytes = reinterpret_cast<uint8_t*>(out);
  int8_t q[kPiece];  // kPiece is a multiple of 128: pieces start on a byte (an int3 block)
  for (size_t first = 0; first < w.size(); first += kPiece) {
    const size_t n = std::min(kPiece, w.size() - first);
    quantize_piece(w.data() + first, n, s, static_cast<float>(-qmax - 1), static_cast<float>(qmax),
                   q);
    pack_codes_loops(q, n, type, bytes, first);
  }
}

// The same loops compiled for AVX2 and for AVX-512 (its narrowing moves pack
// the codes in one instruction), for CPUs that have them: on baseline x86-64
// the division and the byte packing run in 4-lane or scalar code, and a
// per-row conversion (convert --experts int4, load-time quantization) took
// twice as long. The results are the same: every step is exact.
GLMRT_TARGET_AVX2_FMA void quantize_row_avx2(std::span<const float> w, uint32_t type,
                                             std::byte* out, float* scale) {
  quantize_row_loops(w, type, out, scale);
}

GLMRT_TARGET_AVX512 void quantize_row_avx512(std::span<const float> w, uint32_t type,
                                             std::byte* out, float* scale) {
  quantize_row_loops(w, type, out, scale);
}

void quantize_row(std::span<const float> w, uint32_t type, std::byte* out, float* scale) {
  if (cpu_features().avx512)
    quantize_row_avx512(w, type, out, scale);
  else if (cpu_features().avx2_fma)
    quantize_row_avx2(w, type, out, scale);
  else
    quantize_row_loops(w, type, out, scale);
}

GLMRT_TARGET_AVX2_FMA void pack_codes_avx2(const int8_t* q, size_t n, uint32_t type, uint8_t* bytes,
                                           size_t first) {
  pack_codes_loops(q, n, type, bytes, first);
}

GLMRT_TARGET_AVX512 void pack_codes_avx512(const int8_t* q, size_t n, uint32_t type, uint8_t* bytes,
                                           size_t first) {
  pack_codes_loops(q, n, type, bytes, first);
}

// Packs codes q[0, n) into row bytes starting at value `first` (as above).
void pack_codes(const int8_t* q, size_t n, uint32_t type, uint8_t* bytes, size_t first) {
  if (cpu_features().avx512)
    pack_codes_avx512(q, n, type, bytes, first);
  else if (cpu_features().avx2_fma)
    pack_codes_avx2(q, n, type, bytes, first);
  else
    pack_codes_loops(q, n, type, bytes, first);
}

// Per group: each group's scale from the clipping search (group_quantizer.h).
void quantize_groups(std::span<const float> w, const MatrixStorage& dst, std::byte* out,
                     float* scales) {
  const auto g = static_cast<size_t>(dst.group_size);
  thread_local std::vector<int8_t> codes;
  codes.resize(w.size());
  for (size_t first = 0, k = 0; first < w.size(); first += g, ++k) {
    const size_t n = std::min(g, w.size() - first);
    const std::span<const float> a = dst.importance
                                         ? std::span<const float>(dst.importance + first, n)
                                         : std::span<const float>();
    scales[k] = quantize_group_searched(w.subspan(first, n), a, dst.type, codes.data() + first);
  }
  pack_codes(codes.data(), w.size(), dst.type, reinterpret_cast<uint8_t*>(out), 0);
}

// Two-level (weight_format.h): each small group's scale from the clipping
// search, then per block of 256 inputs one f32 scale d with int8 codes c for
// the groups' scales (d = max |s| / 127, c = round(s / d)), the codes of each
// group rounded again to its scale d * c as stored, and d refitted by least
// squares for those codes (sum a w c q / sum a (c q)^2), as llama.cpp's
// K-quants quantize their block scales and refit.
void quantize_two_level(std::span<const float> w, const MatrixStorage& dst, std::byte* out,
                        float* block_scales) {
  const uint32_t code_type = plugin::code_type(dst.type);
  const auto group = static_cast<size_t>(plugin::two_level_group(dst.type));
  const auto block = static_cast<size_t>(plugin::kTwoLevelBlock);
  const int qmax = packed_qmax(code_type);
  const size_t n = w.size(), groups = (n + group - 1) / group;
  thread_local std::vector<int8_t> codes;
  thread_local std::vector<float> group_scales;
  codes.resize(n);
  group_scales.resize(groups);
  for (size_t g = 0; g < groups; ++g) {
    const size_t first = g * group, count = std::min(group, n - first);
    const std::span<const float> a = dst.importance
                                         ? std::span<const float>(dst.importance + first, count)
                                         : std::span<const float>();
    group_scales[g] =
        quantize_group_searched(w.subspan(first, count), a, code_type, codes.data() + first);
  }
  auto* sub = reinterpret_cast<int8_t*>(out) + plugin::packed_row_bytes(code_type, dst.cols);
  const size_t per_block = block / group;
  for (size_t b = 0, g0 = 0; g0 < groups; ++b, g0 += per_block) {
    const size_t g1 = std::min(groups, g0 + per_block);
    float largest = 0.f;
    for (size_t g = g0; g < g1; ++g) largest = std::max(largest, std::fabs(group_scales[g]));
    float d = largest > 0.f && std::isfinite(largest) ? largest / 127.f : 0.f;
    double num = 0, den = 0;
    for (size_t g = g0; g < g1; ++g) {
      const float c =
          d > 0.f ? std::clamp(std::nearbyint(group_scales[g] / d), -127.f, 127.f) : 0.f;
      sub[g] = static_cast<int8_t>(c);
      const size_t first = g * group, count = std::min(group, n - first);
      int8_t* q = codes.data() + first;
      if (c == 0.f) {
        std::fill_n(q, count, int8_t{0});
        continue;
      }
      quantize_piece(w.data() + first, count, d * c, static_cast<float>(-qmax - 1),
                     static_cast<float>(qmax), q);
      for (size_t i = 0; i < count; ++i) {
        const double a = dst.importance ? dst.importance[first + i] : 1.0;
        const double cq = static_cast<double>(c) * q[i];
        num += a * w[first + i] * cq;
        den += a * cq * cq;
      }
    }
    // The refit only moves d toward the codes' least-squares scale; an
    // all-zero importance (den 0) keeps the max-abs d.
    if (den > 0 && num > 0) d = static_cast<float>(num / den);
    block_scales[b] = d > 0.f ? d : 1e-8f;
  }
  pack_codes(codes.data(), n, code_type, reinterpret_cast<uint8_t*>(out), 0);
}

// f32 -> bf16 rounding to nearest even, NaN kept NaN (as f32_to_bf16), without
// branches so the loop vectorizes.
void encode_bf16(std::span<const float> values, uint16_t* out) {
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &values[i], 4);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t nan = (u >> 16) | 0x40u;
    out[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

void decode_packed_row(const uint8_t* bytes, uint32_t type, float s, std::span<float> out) {
  const size_t n = out.size();
  if (n == 0) return;
  switch (type) {
    case GLMRT_I8:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int8_t>(bytes[i])) * s;
      return;
    case GLMRT_I4:
      for (size_t i = 0; i + 1 < n; i += 2) {
        out[i] = static_cast<float>((bytes[i / 2] & 0xF) - 8) * s;
        out[i + 1] = static_cast<float>((bytes[i / 2] >> 4) - 8) * s;
      }
      if (n % 2) out[n - 1] = static_cast<float>((bytes[n / 2] & 0xF) - 8) * s;
      return;
    case GLMRT_I2:
      for (size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(((bytes[i / 4] >> (2 * (i & 3))) & 0x3) - 2) * s;
      return;
    case GLMRT_I3:
      for (size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(static_cast<int>(plugin::int3_stored_code(
                                        bytes, static_cast<int64_t>(n), static_cast<int64_t>(i))) -
                                    4) *
                 s;
      return;
    default:
      fail("decode_packed_row: element type {} is not a packed integer type", type);
  }
}

// Per group: each group is a whole number of bytes (group sizes are multiples
// of 8), but for int3, whose blocks put a group's low and high bits apart.
void decode_grouped_row(const uint8_t* bytes, uint32_t type, const float* scales, uint32_t group,
                        std::span<float> out) {
  if (plugin::is_two_level(type)) {
    thread_local std::vector<float> group_scales;
    const int64_t sub_group = plugin::two_level_group(type);
    group_scales.resize((out.size() + sub_group - 1) / sub_group);
    plugin::two_level_group_scales(type, bytes, static_cast<int64_t>(out.size()), scales,
                                   group_scales.data());
    decode_packed_row(bytes, plugin::code_type(type), 1.f, out);
    for (size_t i = 0; i < out.size(); ++i) out[i] *= group_scales[i / sub_group];
    return;
  }
  if (type == GLMRT_I3) {
    decode_packed_row(bytes, type, 1.f, out);
    for (size_t i = 0; i < out.size(); ++i) out[i] *= scales[i / group];
    return;
  }
  const int64_t row_bytes = plugin::packed_row_bytes(type, group);
  for (size_t first = 0, k = 0; first < out.size(); first += group, ++k)
    decode_packed_row(bytes + k * row_bytes, type, scales[k],
                      out.subspan(first, std::min<size_t>(group, out.size() - first)));
}

}  // namespace

int64_t SourceMatrix::row_bytes() const {
  if (dtype == DType::U8) return plugin::packed_row_bytes(packed_type, cols);
  if (dtype == DType::GGML) return plugin::ggml_row_bytes(ggml_type, cols);
  return cols * static_cast<int64_t>(dtype_size(dtype));
}

void SourceMatrix::check(std::string_view what) const {
  const bool packed = dtype == DType::U8;
  if (dtype == DType::GGML && row_bytes() < 0)
    fail("{}: rows of {} values are not whole blocks of ggml type {}", what, cols,
         ggml_type_name(ggml_type));
  if (!packed && dtype != DType::GGML && !is_float_dtype(dtype))
    fail("{}: dtype {} is neither a float type nor packed U8", what, dtype_name(dtype));
  if (packed && !plugin::is_quantized(packed_type))
    fail("{}: packed element type {} is not int8, int4, int3 or int2", what, packed_type);
  if (packed && plugin::is_two_level(packed_type) &&
      group_size != static_cast<uint32_t>(plugin::kTwoLevelBlock))
    fail("{}: two-level {} values have one scale per {} inputs, not {}", what,
         plugin::element_type_name(packed_type), plugin::kTwoLevelBlock, group_size);
  if (static_cast<int64_t>(data.size()) != rows * row_bytes())
    fail("{}: {} bytes do not hold a {}x{} matrix ({} bytes per row)", what, data.size(), rows,
         cols, row_bytes());
  const int64_t per_row = MatrixStorage::scales_per_row_of(cols, group_size);
  if (packed && static_cast<int64_t>(scales.size()) != rows * per_row)
    fail("{}: {} scales for {} rows of {} scales", what, scales.size(), rows, per_row);
}

void SourceMatrix::decode_row(int64_t r, std::span<float> out) const {
  const auto row = data.subspan(static_cast<size_t>(r * row_bytes()), row_bytes());
  if (dtype == DType::GGML) {
    dequantize_ggml_row(ggml_type, row, out);
    for (size_t c = 0; c < out.size(); ++c)
      if (!std::isfinite(out[c]))
        fail("{} ggml blocks of row {} dequantize to {} at column {}: weights must be finite",
             ggml_type_name(ggml_type), r, out[c], c);
  } else if (dtype == DType::U8) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(row.data());
    if (group_size)
      decode_grouped_row(bytes, packed_type,
                         scales.data() + r * MatrixStorage::scales_per_row_of(cols, group_size),
                         group_size, out);
    else
      decode_packed_row(bytes, packed_type, scales[r], out);
  } else {
    decode_to_f32(dtype, row, out);
  }
}

void pack_row_codes(std::span<const int8_t> codes, uint32_t type, std::byte* out) {
  pack_codes(codes.data(), codes.size(), type, reinterpret_cast<uint8_t*>(out), 0);
}

void encode_row(std::span<const float> values, const MatrixStorage& dst, int64_t r) {
  std::byte* out = dst.data + r * dst.row_bytes;
  switch (dst.type) {
    case GLMRT_F32:
      std::memcpy(out, values.data(), values.size_bytes());
      return;
    case GLMRT_BF16:
      encode_bf16(values, reinterpret_cast<uint16_t*>(out));
      return;
    default:
      if (plugin::is_two_level(dst.type))
        quantize_two_level(values, dst, out, dst.scales + r * dst.scales_per_row());
      else if (dst.group_size)
        quantize_groups(values, dst, out, dst.scales + r * dst.scales_per_row());
      else
        quantize_row(values, dst.type, out, &dst.scales[r]);
  }
}

namespace {

void check_conversion(const SourceMatrix& src, const MatrixStorage& dst, int64_t dst_first_row) {
  src.check("convert_rows");
  if (src.cols != dst.cols || dst_first_row < 0 || dst_first_row + src.rows > dst.rows)
    fail("convert_rows: {}x{} source rows into rows {}.. of a {}x{} matrix", src.rows, src.cols,
         dst_first_row, dst.rows, dst.cols);
  if (dst.row_bytes != plugin::packed_row_bytes(dst.type, dst.cols) ||
      (plugin::is_quantized(dst.type) && dst.scales == nullptr) ||
      (plugin::is_two_level(dst.type) &&
       dst.group_size != static_cast<uint32_t>(plugin::kTwoLevelBlock)))
    fail("convert_rows: destination of element type {} is not laid out for {} columns", dst.type,
         dst.cols);
}

}  // namespace

void convert_rows(const SourceMatrix& src, const MatrixStorage& dst, int64_t dst_first_row) {
  check_conversion(src, dst, dst_first_row);
  std::vector<float> row(static_cast<size_t>(src.cols));
  for (int64_t r = 0; r < src.rows; ++r) {
    src.decode_row(r, row);
    encode_row(row, dst, dst_first_row + r);
  }
}

void convert_matrix(const SourceMatrix& src, const MatrixStorage& dst) {
  // Checked here: an exception cannot leave the parallel region below.
  check_conversion(src, dst, 0);
  if (src.rows != dst.rows)
    fail("convert_matrix: a {}-row source into a {}-row matrix", src.rows, dst.rows);
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
