// The i-quants iq4_xs and iq2_xxs against int8 activations, and which
// kernel each ggml type takes (in each build, ggml_dots.h).
#include "ggml_dot_kernels.h"

#include <ggml/ggml_grids.h>

#include <array>

namespace glmrt::kernels_avx2::GLMRT_GGML_DOTS {
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
  const __m256i high_lane4 = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4);
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
#pragma GCC unroll 8
    for (int b = 0; b < 8; ++b) {
      // The sub-block's 16 bytes in both 128-bit lanes (a broadcast load, no
      // cross-lane shuffle), low nibbles from the low lane, high from the high.
      const __m256i bytes = _mm256_broadcastsi128_si256(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 8 + 16 * b)));
      w[b] =
          _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srlv_epi32(bytes, high_lane4), low4));
      magnitude[b] = _mm256_sign_epi8(w[b], w[b]);
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

/// Entry i: eight bytes of +1 / -1 for a group of 8 IQ2 values whose 7-bit
/// sign index is i: bit j negates value j (j < 7), and value 7 is negated
/// when those seven count odd (ggml's ksigns_iq2xs keeps the count of minus
/// signs even). A table lookup per 8 values instead of bit tests per value,
/// as llama.cpp's ggml-cpu x86 kernels do with their keven_signs_q2xs.
constexpr std::array<uint64_t, 128> make_iq2_sign_bytes() {
  std::array<uint64_t, 128> table{};
  for (unsigned i = 0; i < 128; ++i) {
    unsigned minus = 0;
    uint64_t bytes = 0;
    for (unsigned j = 0; j < 8; ++j) {
      const bool negative = j < 7 ? ((i >> j) & 1) != 0 : (minus & 1) != 0;
      minus += negative ? 1 : 0;
      bytes |= static_cast<uint64_t>(negative ? 0xFF : 0x01) << (8 * j);
    }
    table[i] = bytes;
  }
  return table;
}
constexpr std::array<uint64_t, 128> kIq2SignBytes = make_iq2_sign_bytes();

/// +1 / -1 bytes for the 32 values of an IQ2 sub-block from its le32 word of
/// four 7-bit sign indices (the top 4 bits are the scale).
GLMRT_ALWAYS_INLINE __m256i iq2_signs(uint32_t word) {
  return _mm256_setr_epi64x(static_cast<int64_t>(kIq2SignBytes[word & 127]),
                            static_cast<int64_t>(kIq2SignBytes[(word >> 7) & 127]),
                            static_cast<int64_t>(kIq2SignBytes[(word >> 14) & 127]),
                            static_cast<int64_t>(kIq2SignBytes[(word >> 21) & 127]));
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

template void dot_iq4_xs<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_iq4_xs<2>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_iq4_xs<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_iq2_xxs<1>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_iq2_xxs<2>(const uint8_t*, int64_t, const GgmlColumn*, float*);
template void dot_iq2_xxs<kGgmlColumns>(const uint8_t*, int64_t, const GgmlColumn*, float*);

/// The kernel of one type at every width.
#define GLMRT_GGML_KERNEL(name)             \
  GgmlKernel {                              \
    &name<1>, &name<2>, &name<kGgmlColumns> \
  }

GgmlKernel kernel_of(uint32_t ggml_type) {
  switch (ggml_type) {
    case GLMRT_GGML_Q8_0:
      return GLMRT_GGML_KERNEL(dot_q8_0);
    case GLMRT_GGML_Q4_0:
      return GLMRT_GGML_KERNEL(dot_q4_0);
    case GLMRT_GGML_Q2_K:
      return GLMRT_GGML_KERNEL(dot_q2_k);
    case GLMRT_GGML_Q4_K:
      return GLMRT_GGML_KERNEL(dot_q4_k);
    case GLMRT_GGML_Q6_K:
      return GLMRT_GGML_KERNEL(dot_q6_k);
    case GLMRT_GGML_IQ2_XXS:
      return GLMRT_GGML_KERNEL(dot_iq2_xxs);
    case GLMRT_GGML_IQ4_XS:
      return GLMRT_GGML_KERNEL(dot_iq4_xs);
    default:
      return {};
  }
}

#undef GLMRT_GGML_KERNEL

}  // namespace glmrt::kernels_avx2::GLMRT_GGML_DOTS
