// Rows packed in place into lanes (ggml_packed_rows.h) for q8_0 and q4_0,
// built with -mavxvnni. The block layouts are ggml-common.h's (block_q8_0:
// f16 d then 32 int8 codes; block_q4_0: f16 d then 16 bytes, value j the
// low nibble of byte j and value j + 16 its high one).
//
// A packed group of 8 rows holds, per block, a piece of 8 x (block bytes):
// the rows' code bytes 4 at a time (bytes 4g..4g+3 of row i at 32 g + 4 i),
// then the rows' 8 f16 d. Piece of block b sits at position
// (b % 8) * (blocks / 8) + b / 8: the 8 partial sums in turn, each in row
// order, as the kernel reads them.
#include "ggml_packed_rows.h"

#include "ggml_lane_kernels.h"

#include <omp.h>

#include <vector>

namespace glmrt::kernels_avx2 {
namespace {

using namespace lanes;

int64_t piece_of(int64_t b, int64_t blocks) {
  return (b % 8) * (blocks / 8) + b / 8;
}

template <int kBlockBytes>
void pack_group(const uint8_t* rows, int64_t row_bytes, int64_t blocks, uint8_t* out) {
  constexpr int kCodeBytes = kBlockBytes - 2;
  constexpr int kPiece = kPackedGroupRows * kBlockBytes;
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* piece = out + kPiece * piece_of(b, blocks);
    for (int i = 0; i < kPackedGroupRows; ++i) {
      const uint8_t* block = rows + i * row_bytes + kBlockBytes * b;
      for (int g = 0; g < kCodeBytes / 4; ++g)
        std::memcpy(piece + 32 * g + 4 * i, block + 2 + 4 * g, 4);
      std::memcpy(piece + kPackedGroupRows * kCodeBytes + 2 * i, block, 2);
    }
  }
}

/// Each row's exact sum of its 32 codes times x[0..31], codes unsigned:
/// q8_0's stored codes + 128, q4_0's nibbles.
template <int kCodeBytes>
GLMRT_ALWAYS_INLINE __m256i piece_sums(const uint8_t* piece, const int8_t* x) {
  __m256i first = _mm256_setzero_si256(), second = _mm256_setzero_si256();
  const auto input = [&](int k) {
    int32_t v;
    std::memcpy(&v, x + 4 * k, 4);
    return _mm256_set1_epi32(v);
  };
  if constexpr (kCodeBytes == 32) {
    const __m256i flip = _mm256_set1_epi8(-128);
#pragma GCC unroll 4
    for (int k = 0; k < 8; k += 2) {
      first = _mm256_dpbusd_avx_epi32(
          first, _mm256_xor_si256(load32(piece + 32 * k), flip), input(k));
      second = _mm256_dpbusd_avx_epi32(
          second, _mm256_xor_si256(load32(piece + 32 * k + 32), flip), input(k + 1));
    }
  } else {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      const __m256i bytes = load32(piece + 32 * g);
      first = _mm256_dpbusd_avx_epi32(first, _mm256_and_si256(bytes, low4), input(g));
      second = _mm256_dpbusd_avx_epi32(
          second, _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4), input(g + 4));
    }
  }
  return _mm256_add_epi32(first, second);
}

template <int kBlockBytes, int kOffset, int C>
void meet_group(const uint8_t* group, int64_t blocks, const GgmlColumn* x, float* out) {
  constexpr int kCodeBytes = kBlockBytes - 2;
  constexpr int kPiece = kPackedGroupRows * kBlockBytes;
  const int64_t per_lane = blocks / 8;
  meet_lanes<C>(per_lane, out, [&](int j, int64_t k, __m256(&acc)[C]) {
    const int64_t b = 8 * k + j;
    const uint8_t* piece = group + kPiece * (j * per_lane + k);
    const __m256 d = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(piece + kPackedGroupRows * kCodeBytes)));
    for (int c = 0; c < C; ++c) {
      __m256i sums = piece_sums<kCodeBytes>(piece, x[c].values + 32 * b);
      const int x_sum = x[c].sums16[2 * b] + x[c].sums16[2 * b + 1];
      sums = _mm256_sub_epi32(sums, _mm256_set1_epi32(kOffset * x_sum));
      const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[c].scales[b]));
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, acc[c]);
    }
  });
}

template <int C>
struct MeetQ8_0 {
  static void run(const uint8_t* g, int64_t n, const GgmlColumn* x, float* o) {
    meet_group<34, 128, C>(g, n, x, o);
  }
};
template <int C>
struct MeetQ4_0 {
  static void run(const uint8_t* g, int64_t n, const GgmlColumn* x, float* o) {
    meet_group<18, 8, C>(g, n, x, o);
  }
};

}  // namespace

bool packs_rows(uint32_t ggml_type, int64_t blocks) {
  // The row kernels keep a lane per block of 8: whole groups of blocks only.
  return (ggml_type == GLMRT_GGML_Q8_0 || ggml_type == GLMRT_GGML_Q4_0) && blocks > 0 &&
         blocks % 8 == 0;
}

void pack_rows_in_place(uint32_t ggml_type, uint8_t* data, int64_t rows, int64_t blocks,
                        int64_t row_bytes, int n_threads) {
  const int64_t groups = rows / kPackedGroupRows;
  const size_t group_bytes = static_cast<size_t>(kPackedGroupRows * row_bytes);
#pragma omp parallel num_threads(n_threads)
  {
    std::vector<uint8_t> packed(group_bytes);
#pragma omp for schedule(static)
    for (int64_t g = 0; g < groups; ++g) {
      uint8_t* rows_of_group = data + g * static_cast<int64_t>(group_bytes);
      if (ggml_type == GLMRT_GGML_Q8_0)
        pack_group<34>(rows_of_group, row_bytes, blocks, packed.data());
      else
        pack_group<18>(rows_of_group, row_bytes, blocks, packed.data());
      std::memcpy(rows_of_group, packed.data(), group_bytes);
    }
  }
}

void meet_packed_group(uint32_t ggml_type, const uint8_t* group, int64_t blocks,
                       const GgmlColumn* x, int columns, float* out) {
  if (ggml_type == GLMRT_GGML_Q8_0) return meet_columns<MeetQ8_0>(group, blocks, x, columns, out);
  return meet_columns<MeetQ4_0>(group, blocks, x, columns, out);
}

}  // namespace glmrt::kernels_avx2
