#include "ggml_block_fill.h"

#include "random_bits.h"

#include <glmrt/base/error.h>
#include <glmrt/plugin/ggml_types.h>

#include "ggml/ggml_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace glmrt {
namespace {

// f32 -> IEEE half, rounded to nearest even (subnormals kept, overflow to inf).
uint16_t f16_bits(float f) {
  uint32_t x = 0;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xffu) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xffu) == 0xffu)
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  const auto rounded = [](uint32_t kept, uint32_t rest, uint32_t half_way) {
    return kept + ((rest > half_way || (rest == half_way && (kept & 1u))) ? 1u : 0u);
  };
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - exp;
    return static_cast<uint16_t>(
        sign | rounded(mant >> shift, mant & ((1u << shift) - 1), 1u << (shift - 1)));
  }
  return static_cast<uint16_t>(
      sign | rounded((static_cast<uint32_t>(exp) << 10) | (mant >> 13), mant & 0x1fffu, 0x1000u));
}

uint16_t bf16_bits(float f) {
  uint32_t x = 0;
  std::memcpy(&x, &f, 4);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

void put16(std::byte* at, uint16_t v) {
  at[0] = static_cast<std::byte>(v & 0xff);
  at[1] = static_cast<std::byte>(v >> 8);
}

// Byte offsets of a block's f16 scale and f16 min (-1: none), ggml_blocks.h.
struct ScaleFields {
  int scale = 0, min = -1;
};

ScaleFields scale_fields(uint32_t type) {
  switch (type) {
    case GLMRT_GGML_Q4_1:
    case GLMRT_GGML_Q5_1:
    case GLMRT_GGML_Q4_K:
    case GLMRT_GGML_Q5_K:
      return {0, 2};
    case GLMRT_GGML_Q2_K:
      return {80, 82};
    case GLMRT_GGML_Q3_K:
      return {108, -1};
    case GLMRT_GGML_Q6_K:
      return {208, -1};
    default:  // Q4_0, Q5_0, Q8_0, IQ4_NL, IQ4_XS and the i-quants but IQ1_M
      return {0, -1};
  }
}

// Sets the scale of every block of `blocks` (whole blocks of `block_bytes`)
// to `scale` and its min to `min`; the encodings are worked out once.
void set_scales(uint32_t type, std::span<std::byte> blocks, int64_t block_bytes, float scale,
                float min) {
  const auto count = static_cast<int64_t>(blocks.size()) / block_bytes;
  std::byte* block = blocks.data();
  if (type == GLMRT_GGML_MXFP4) {  // an E8M0 exponent: the nearest power of two
    const double e = 127.0 + std::round(std::log2(std::max<double>(scale, 0x1.0p-120)));
    const auto code = static_cast<std::byte>(std::clamp(e, 1.0, 254.0));
    for (int64_t k = 0; k < count; ++k) block[k * block_bytes] = code;
    return;
  }
  if (type == GLMRT_GGML_IQ1_M) {  // the f16 scale is the top nibbles of four le16 sub-scales
    const uint16_t h = f16_bits(scale);
    constexpr int kScales = 48;  // after qs[32] and qh[16]
    for (int64_t k = 0; k < count; ++k)
      for (int n = 0; n < 4; ++n) {
        std::byte& high = block[k * block_bytes + kScales + 2 * n + 1];
        high = (high & std::byte{0x0f}) | static_cast<std::byte>(((h >> (4 * n)) & 0xf) << 4);
      }
    return;
  }
  const ScaleFields f = scale_fields(type);
  const uint16_t h = f16_bits(scale), hm = f16_bits(min);
  for (int64_t k = 0; k < count; ++k) {
    put16(block + k * block_bytes + f.scale, h);
    if (f.min >= 0) put16(block + k * block_bytes + f.min, hm);
  }
}

// K-quants with mins: each sub-block's min code set to its scale code, so
// with dmin = d * mean(q) every sub-block has zero mean (random mins would
// give each sub-block its own offset: weights correlated along the row).
void tie_mins_to_scales(uint32_t type, std::span<std::byte> blocks, int64_t block_bytes) {
  const auto count = static_cast<int64_t>(blocks.size()) / block_bytes;
  for (int64_t k = 0; k < count; ++k) {
    std::byte* block = blocks.data() + k * block_bytes;
    if (type == GLMRT_GGML_Q2_K) {  // scales[16] at 0: low nibble scale, high nibble min
      for (int j = 0; j < 16; ++j) block[j] = (block[j] & std::byte{0x0f}) | (block[j] << 4);
    } else if (type == GLMRT_GGML_Q4_K || type == GLMRT_GGML_Q5_K) {
      // scales[12] at 4 (get_scale_min_k4): bytes 0-3 scales 0-3 (+ top bits of 4-7),
      // bytes 4-7 the mins alike, bytes 8-11 low nibble scale 4-7, high nibble min 4-7.
      std::byte* sc = block + 4;
      std::memcpy(sc + 4, sc, 4);
      for (int j = 8; j < 12; ++j) sc[j] = (sc[j] & std::byte{0x0f}) | (sc[j] << 4);
    }
  }
}

bool is_float(uint32_t type) {
  return type == GLMRT_GGML_F32 || type == GLMRT_GGML_F16 || type == GLMRT_GGML_BF16;
}

void random_bytes(uint64_t key, std::span<std::byte> out) {
  const size_t words = out.size() / 8;
  for (size_t i = 0; i < words; ++i) {
    const uint64_t w = random_word(key, i);
    std::memcpy(out.data() + 8 * i, &w, 8);
  }
  const uint64_t last = random_word(key, words);
  std::memcpy(out.data() + 8 * words, &last, out.size() - 8 * words);
}

}  // namespace

GgmlRowFiller::GgmlRowFiller(uint32_t ggml_type) : type_(ggml_type) {
  if (is_float(type_)) return;
  const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(type_);
  if (traits.name == nullptr || !plugin_support::ggml::dequantizes(type_))
    fail("make-model: ggml type {} cannot be written", type_);
  block_values_ = traits.block_values;
  block_bytes_ = traits.block_bytes;
  // Decode random blocks with scale 1 and min 0, then scale 0 and min 1:
  // the values are scale * a + min * b, linear in both.
  constexpr int kBlocks = 64;
  std::vector<std::byte> blocks(static_cast<size_t>(kBlocks * block_bytes_));
  random_bytes(0x67676d6c ^ type_, blocks);
  tie_mins_to_scales(type_, blocks, block_bytes_);
  std::vector<float> a(static_cast<size_t>(kBlocks * block_values_)), b(a.size());
  const auto decode = [&](float scale, float min, std::vector<float>& out) {
    set_scales(type_, blocks, block_bytes_, scale, min);
    plugin_support::ggml::dequantize_row(type_, blocks.data(), static_cast<int64_t>(out.size()),
                                         out.data());
  };
  decode(1, 0, a);
  const ScaleFields fields = scale_fields(type_);
  const auto mean = [](const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  if (fields.min >= 0 && type_ != GLMRT_GGML_MXFP4 && type_ != GLMRT_GGML_IQ1_M) {
    decode(0, 1, b);
    if (const double mb = mean(b); mb != 0) min_ratio_ = -mean(a) / mb;
  }
  decode(1, static_cast<float>(min_ratio_), a);
  double squares = 0;
  for (float x : a) squares += double(x) * x;
  rms_per_scale_ = std::sqrt(squares / static_cast<double>(a.size()));
  if (!(rms_per_scale_ > 0) || !std::isfinite(rms_per_scale_))
    fail("make-model: random {} blocks decode to RMS {}", traits.name, rms_per_scale_);
}

void GgmlRowFiller::fill_row(uint64_t row_key, double rms, int64_t cols,
                             std::span<std::byte> out) const {
  if (is_float(type_)) {
    Random random(row_key);
    for (int64_t c = 0; c < cols; ++c) {
      const auto v = static_cast<float>(rms * random.normal());
      if (type_ == GLMRT_GGML_F32)
        std::memcpy(&out[static_cast<size_t>(c) * 4], &v, 4);
      else
        put16(&out[static_cast<size_t>(c) * 2],
              type_ == GLMRT_GGML_F16 ? f16_bits(v) : bf16_bits(v));
    }
    return;
  }
  random_bytes(row_key, out);
  tie_mins_to_scales(type_, out, block_bytes_);
  // Each row at its own scale, as weight_fill's rows: 0.8 to 1.2 times the mean.
  Random jitter(mix(row_key ^ 0x5ca1e5ull));
  const double scale = rms / rms_per_scale_ * (0.8 + 0.4 * jitter.uniform());
  const auto s = static_cast<float>(scale), m = static_cast<float>(scale * min_ratio_);
  set_scales(type_, out, block_bytes_, s, m);
}

}  // namespace glmrt
