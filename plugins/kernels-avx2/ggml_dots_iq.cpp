// The i-quants iq4_xs and iq2_xxs against int8 activations, and which
// kernel each ggml type takes.
#include "ggml_dot_kernels.h"

#include <ggml/ggml_grids.h>

#include <array>

namespace glmrt::kernels_avx2 {
namespace ggml_dots {
namespace {

namespace ggml = plugin_support::ggml;

// IQ4_XS: f16 d, le16 of high scale bits, 4 bytes of low scale bits, 128 bytes
// of nibbles indexing kvalues_iq4nl; sub-block b: bytes 16b..16b+15, low
// nibbles values 0-15, high nibbles 16-31. value = d * (ls - 32) * kvalues[q].
}  // namespace

template <int C>
void dot_iq4_xs(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  const __m256i table = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kValuesIq4nl.data())));
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i shift4 = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  const __m256i shift2 = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 136 * sb;
    prefetch_block(block, 136);
    // ls of sub-block b: bits 4b..4b+3 of the le32 of low bits, 2b..2b+1 of
    // the le16 of high bits.
    uint32_t low_bits;
    std::memcpy(&low_bits, block + 4, sizeof(low_bits));
    const __m256i low_ls = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int32_t>(low_bits)), shift4),
        _mm256_set1_epi32(0xF));
    const __m256i high_ls =
        _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(block[2] | (block[3] << 8)), shift2),
                         _mm256_set1_epi32(0x3));
    const __m256 scales = _mm256_cvtepi32_ps(_mm256_sub_epi32(
        _mm256_or_si256(low_ls, _mm256_slli_epi32(high_ls, 4)), _mm256_set1_epi32(32)));
    const float d = f16(block);
    __m256i w[8], magnitude[8];
#pragma GCC unroll 4
    for (int b = 0; b < 8; b += 2) {
      // Sub-blocks b and b + 1 from one load: [b low | b+1 low], [b high | b+1 high].
      const __m256i bytes = load32(block + 8 + 16 * b);
      const __m256i low = _mm256_and_si256(bytes, low4);
      const __m256i high = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
      w[b] = _mm256_shuffle_epi8(table, _mm256_permute2x128_si256(low, high, 0x20));
      w[b + 1] = _mm256_shuffle_epi8(table, _mm256_permute2x128_si256(low, high, 0x31));
      magnitude[b] = _mm256_sign_epi8(w[b], w[b]);
      magnitude[b + 1] = _mm256_sign_epi8(w[b + 1], w[b + 1]);
    }
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b)
        p[b] = dot_unsigned(magnitude[b], _mm256_sign_epi8(load32(xs + 32 * b), w[b]));
      acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)),
                                                           _mm256_loadu_ps(x[c].scales + 8 * sb)),
                                             scales),
                               _mm256_set1_ps(d), acc[c]);
    }
  }
  finish<C>(acc, out);
}

/// Byte 8k + j of the result: which byte of a sign word holds the sign bit of
/// value j of group k (bit 7k + j), 0x80 (none) for j = 7.
constexpr std::array<int8_t, 32> make_sign_byte_index() {
  std::array<int8_t, 32> index{};
  for (int v = 0; v < 32; ++v) {
    const int k = v / 8, j = v % 8;
    index[v] = static_cast<int8_t>(j == 7 ? -128 : (7 * k + j) / 8);
  }
  return index;
}
/// The bit within that byte; 1 for j = 7, where the byte is 0 and tests clear.
constexpr std::array<int8_t, 32> make_sign_bit() {
  std::array<int8_t, 32> bits{};
  for (int v = 0; v < 32; ++v) {
    const int k = v / 8, j = v % 8;
    bits[v] = static_cast<int8_t>(j == 7 ? 1 : 1 << ((7 * k + j) % 8));
  }
  return bits;
}
constexpr std::array<int8_t, 32> kSignByteIndex = make_sign_byte_index();
constexpr std::array<int8_t, 32> kSignBit = make_sign_bit();

/// +1 / -1 bytes for the 32 values of an IQ2 sub-block from its le32 word:
/// bit 7k + j negates value j of group k (j < 7); value 7 is negated when
/// the group's other seven signs count odd (ggml's ksigns_iq2xs keeps the
/// count of minus signs even).
GLMRT_ALWAYS_INLINE __m256i iq2_signs(uint32_t word) {
  const __m256i index = load32(kSignByteIndex.data()), bit = load32(kSignBit.data());
  const __m256i one = _mm256_set1_epi8(1), zero = _mm256_setzero_si256();
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(word)), index);
  const __m256i negative = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
  const __m256i count = _mm256_sad_epu8(_mm256_and_si256(negative, one), zero);
  const __m256i parity = _mm256_slli_epi64(_mm256_and_si256(count, _mm256_set1_epi64x(1)), 56);
  return _mm256_or_si256(_mm256_or_si256(negative, _mm256_sub_epi8(zero, parity)), one);
}

// IQ2_XXS: f16 d, then per 32 values 4 grid indices (bytes) and a le32 of
// four 7-bit sign indices and a 4-bit scale ls. value = d * (0.5 + ls) / 4 *
// grid value * sign.
template <int C>
void dot_iq2_xxs(const uint8_t* row, int64_t blocks, const GgmlColumn* x, float* out) {
  Accumulators<C> acc = zeros<C>();
  for (int64_t sb = 0; sb < blocks; ++sb) {
    const uint8_t* block = row + 66 * sb;
    prefetch_block(block, 66);
    __m256i grid[8], sign[8];
    // Table loads, not gathers: measured faster (a gather of four u64 costs
    // more than four loads and inserts on Zen 3).
#pragma GCC unroll 8
    for (int b = 0; b < 8; ++b) {
      const uint8_t* group = block + 2 + 8 * b;
      uint32_t signs;
      std::memcpy(&signs, group + 4, sizeof(signs));
      grid[b] = _mm256_setr_epi64x(static_cast<int64_t>(ggml::kIq2xxsGrid[group[0]]),
                                   static_cast<int64_t>(ggml::kIq2xxsGrid[group[1]]),
                                   static_cast<int64_t>(ggml::kIq2xxsGrid[group[2]]),
                                   static_cast<int64_t>(ggml::kIq2xxsGrid[group[3]]));
      sign[b] = iq2_signs(signs);
    }
    // ls: the top 4 bits of each sub-block's 8 bytes, groups 0-3 then 4-7.
    const __m256i first = _mm256_srli_epi64(load32(block + 2), 60);
    const __m256i second = _mm256_srli_epi64(load32(block + 34), 60);
    const __m256i interleaved = _mm256_or_si256(first, _mm256_slli_epi64(second, 32));
    const __m256 ls = _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_permutevar8x32_epi32(
                                        interleaved, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7))),
                                    _mm256_set1_ps(0.5f));
    const float quarter_d = 0.25f * f16(block);
    for (int c = 0; c < C; ++c) {
      const int8_t* xs = x[c].values + 256 * sb;
      __m256i p[8];
#pragma GCC unroll 8
      for (int b = 0; b < 8; ++b)
        p[b] = dot_unsigned(grid[b], _mm256_sign_epi8(load32(xs + 32 * b), sign[b]));
      acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(totals(p)),
                                                           _mm256_loadu_ps(x[c].scales + 8 * sb)),
                                             ls),
                               _mm256_set1_ps(quarter_d), acc[c]);
    }
  }
  finish<C>(acc, out);
}

/// The kernel of one type at both widths.
#define GLMRT_GGML_KERNEL(name)   \
  GgmlKernel {                    \
    &name<1>, &name<kGgmlColumns> \
  }

template void dot_iq4_xs<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_iq4_xs<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_iq2_xxs<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_iq2_xxs<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);

}  // namespace ggml_dots

bool has_ggml_int_kernel(uint32_t element_type) {
  return ggml_kernel(element_type).one != nullptr;
}

GgmlKernel ggml_kernel(uint32_t element_type) {
  if (!plugin::is_ggml_blocks(element_type)) return {};
  switch (plugin::ggml_type_of(element_type)) {
    case GLMRT_GGML_Q8_0:
      return GLMRT_GGML_KERNEL(ggml_dots::dot_q8_0);
    case GLMRT_GGML_Q2_K:
      return GLMRT_GGML_KERNEL(ggml_dots::dot_q2_k);
    case GLMRT_GGML_Q4_K:
      return GLMRT_GGML_KERNEL(ggml_dots::dot_q4_k);
    case GLMRT_GGML_Q6_K:
      return GLMRT_GGML_KERNEL(ggml_dots::dot_q6_k);
    case GLMRT_GGML_IQ2_XXS:
      return GLMRT_GGML_KERNEL(ggml_dots::dot_iq2_xxs);
    case GLMRT_GGML_IQ4_XS:
      return GLMRT_GGML_KERNEL(ggml_dots::dot_iq4_xs);
    default:
      return {};
  }
}

}  // namespace glmrt::kernels_avx2
