// Rows packed in place into lanes (ggml_packed_rows.h) for q4_0, q4_k and q6_k,
// built with -mavxvnni. The block layouts are ggml-common.h's (block_q4_0:
// f16 d, then 16 bytes, value j the low nibble of byte j and value j + 16
// its high one; block_q4_k: f16 d, f16 dmin, 12 bytes of 6-bit scales and
// mins, 128 bytes of nibbles, sub-block 2q the low nibbles of bytes
// 32q..32q+31 and 2q+1 their high ones). Code bytes move 4 at a time: a
// 32-byte chunk holds 4 bytes of each of the 8 rows, row i in lane i, and its
// low and high nibbles are two chunks of codes the lane kernels meet.
//
// q4_0 (pieces of 8 x 18 bytes per block): the rows' 16 code bytes as 4
// chunks, then their 8 f16 d. The piece of block b sits at position
// (b % 8) * (blocks / 8) + b / 8: the 8 partial sums a row kernel keeps in
// turn, each in row order, as the kernel reads them.
//
// q4_k (8 x 144 bytes per super-block): first, for each 32-byte run q of
// nibbles (sub-blocks 2q and 2q + 1), the super-blocks' runs of the 8 rows
// in order (8 chunks, 256 bytes each); then per super-block 128 bytes: the
// rows' 8 f16 d, 8 f16 dmin, and the three 32-bit words of their packed
// scales as 3 vectors (word w of row i in lane i). The kernel reads run
// after run, each front to back, the two sub-blocks of a run together.
//
// q6_k (8 x 210 bytes; block_q6_k: ql[128] low nibbles, qh[64] high bit
// pairs, 16 int8 scales, f16 d; half n's sub-block 4n + k takes the low
// (k < 2) or high nibbles of ql[64n + 32 (k % 2)..] and bits 2k..2k+1 of
// qh[32n..]): for each half, the super-blocks' three 32-byte runs of it
// (ql, ql + 32, qh) as chunks, 768 bytes each; then per super-block the
// rows' 16 scales ([scale][row]) and 8 f16 d. A half's 4 sub-blocks gather
// together.
#include "ggml_packed_rows.h"

#include "ggml_packed_meets.h"

#include <omp.h>

#include <vector>

namespace glmrt::kernels_avx2 {
namespace {

using namespace lanes;

// --- q4_0 ---
constexpr int kQ4_0Block = 18;
constexpr int kQ4_0Piece = kPackedGroupRows * kQ4_0Block;

void pack_group_q4_0(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* out) {
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* piece = out + kQ4_0Piece * ((b % 8) * (blocks / 8) + b / 8);
    for (int i = 0; i < kPackedGroupRows; ++i) {
      const uint8_t* block = rows + i * row_stride + kQ4_0Block * b;
      for (int g = 0; g < 4; ++g) std::memcpy(piece + 32 * g + 4 * i, block + 2 + 4 * g, 4);
      std::memcpy(piece + 128 + 2 * i, block, 2);
    }
  }
}

GLMRT_ALWAYS_INLINE __m256i broadcast4(const int8_t* x) {
  int32_t v;
  std::memcpy(&v, x, 4);
  return _mm256_set1_epi32(v);
}

template <int C>
void meet_q4_0(const uint8_t* group, int64_t blocks, const GgmlColumn* x, float* out) {
  const int64_t per_lane = blocks / 8;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  meet_lanes<Lanes8, C>(per_lane, out, [&](int j, int64_t k, __m256(&acc)[C]) {
    const int64_t b = 8 * k + j;
    const uint8_t* piece = group + kQ4_0Piece * (j * per_lane + k);
    // The row kernels prefetch ahead of a row; here ahead of the piece (the
    // hardware alone falls behind at S = 1).
    for (int line = 0; line < kQ4_0Piece; line += 64) prefetch_ahead(piece + line);
    const __m256 d =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(piece + 128)));
    __m256i codes[8];
    for (int g = 0; g < 4; ++g) {
      const __m256i bytes = load32(piece + 32 * g);
      codes[g] = _mm256_and_si256(bytes, low4);
      codes[g + 4] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
    }
    for (int c = 0; c < C; ++c) {
      __m256i sums = codes_sums(codes, x[c].values + 32 * b);
      const int x_sum = x[c].sums16[2 * b] + x[c].sums16[2 * b + 1];
      sums = _mm256_sub_epi32(sums, _mm256_set1_epi32(8 * x_sum));
      const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[c].scales[b]));
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, acc[c]);
    }
  });
}

template <class, int C>
struct MeetQ4_0 {
  static void run(const uint8_t* g, int64_t n, const GgmlColumn* x, float* o) {
    meet_q4_0<C>(g, n, x, o);
  }
};

// --- q4_k ---
constexpr int kQ4_KBlock = 144;

void pack_group_q4_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* out) {
  uint8_t* headers = out + 4 * kQ4KRunBytes * blocks;
  for (int64_t sb = 0; sb < blocks; ++sb) {
    uint8_t* header = headers + kQ4KHeader * sb;
    for (int i = 0; i < kPackedGroupRows; ++i) {
      const uint8_t* block = rows + i * row_stride + kQ4_KBlock * sb;
      std::memcpy(header + 2 * i, block, 2);
      std::memcpy(header + 16 + 2 * i, block + 2, 2);
      for (int w = 0; w < 3; ++w) std::memcpy(header + 32 + 32 * w + 4 * i, block + 4 + 4 * w, 4);
      for (int q = 0; q < 4; ++q) {
        uint8_t* run = out + kQ4KRunBytes * (q * blocks + sb);
        for (int g = 0; g < 8; ++g)
          std::memcpy(run + 32 * g + 4 * i, block + 16 + 32 * q + 4 * g, 4);
      }
    }
  }
}

// --- q6_k ---
constexpr int kQ6_KBlock = 210;
static_assert(kQ6KHeader == 16 * kPackedGroupRows + 2 * kPackedGroupRows);

void pack_group_q6_k(const uint8_t* rows, int64_t row_stride, int64_t blocks, uint8_t* out) {
  uint8_t* headers = out + 2 * kQ6KHalf * blocks;
  for (int64_t sb = 0; sb < blocks; ++sb) {
    uint8_t* header = headers + kQ6KHeader * sb;
    for (int i = 0; i < kPackedGroupRows; ++i) {
      const uint8_t* block = rows + i * row_stride + kQ6_KBlock * sb;
      for (int f = 0; f < 16; ++f) header[kPackedGroupRows * f + i] = block[192 + f];
      std::memcpy(header + 128 + 2 * i, block + 208, 2);
      for (int n = 0; n < 2; ++n) {
        uint8_t* half = out + kQ6KHalf * (n * blocks + sb);
        const uint8_t* runs[3] = {block + 64 * n, block + 64 * n + 32, block + 128 + 32 * n};
        for (int r = 0; r < 3; ++r)
          for (int g = 0; g < 8; ++g)
            std::memcpy(half + kQ4KRunBytes * r + 32 * g + 4 * i, runs[r] + 4 * g, 4);
      }
    }
  }
}

}  // namespace

bool packs_rows(uint32_t ggml_type, int64_t blocks) {
  if (blocks <= 0) return false;
  // q4_0's row kernel keeps a lane per block of 8: whole groups of blocks only.
  // (q8_0 packed measured no faster: its row kernel already streams at the
  // memory's speed.)
  return ggml_type == GLMRT_GGML_Q4_K || ggml_type == GLMRT_GGML_Q6_K ||
         (ggml_type == GLMRT_GGML_Q4_0 && blocks % 8 == 0);
}

void pack_rows_in_place(uint32_t ggml_type, uint8_t* data, int64_t rows, int64_t blocks,
                        int64_t row_bytes, int64_t row_stride, int n_threads) {
  const int64_t groups = rows / kPackedGroupRows;
  const size_t group_bytes = static_cast<size_t>(kPackedGroupRows * row_bytes);
#pragma omp parallel num_threads(n_threads)
  {
    std::vector<uint8_t> packed(group_bytes);
#pragma omp for schedule(static)
    for (int64_t g = 0; g < groups; ++g) {
      // A group's packed bytes start at its first row, padding between its
      // rows included (it is the matrix's).
      uint8_t* rows_of_group = data + g * kPackedGroupRows * row_stride;
      if (ggml_type == GLMRT_GGML_Q4_K)
        pack_group_q4_k(rows_of_group, row_stride, blocks, packed.data());
      else if (ggml_type == GLMRT_GGML_Q6_K)
        pack_group_q6_k(rows_of_group, row_stride, blocks, packed.data());
      else
        pack_group_q4_0(rows_of_group, row_stride, blocks, packed.data());
      std::memcpy(rows_of_group, packed.data(), group_bytes);
    }
  }
}

bool meets_packed_groups_wide(uint32_t ggml_type) {
  return ggml_type == GLMRT_GGML_Q4_K || ggml_type == GLMRT_GGML_Q6_K;
}

void meet_packed_group(uint32_t ggml_type, const uint8_t* group, int64_t blocks,
                       const GgmlColumn* x, int columns, float* out) {
  if (ggml_type == GLMRT_GGML_Q4_K)
    return meet_packed<Lanes8, MeetPackedQ4K>(group, 0, blocks, x, columns, out);
  if (ggml_type == GLMRT_GGML_Q6_K)
    return meet_packed<Lanes8, MeetPackedQ6K>(group, 0, blocks, x, columns, out);
  return meet_columns<Lanes8, MeetQ4_0>(group, blocks, x, columns, out);
}

}  // namespace glmrt::kernels_avx2
