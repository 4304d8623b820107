// ggml's weight blocks as GGUF stores them, and their dequantization to
// float, bit for bit what ggml's reference `dequantize_row_*`
// (ggml/src/ggml-quants.c) gives. The layouts are those of the block structs
// in ggml/src/ggml-common.h (field order and sizes); every field here is
// bytes, so a block may sit at any address of a mapped file, and multi-byte
// fields are read little-endian (ggml_scalars.h).
//
// A static library of plugin-support: kernels plugins (which see only the
// SDK) and the core link the same code, so a weight means the same floats on
// every path.
#pragma once

#include <glmrt/plugin/ggml_types.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt::plugin_support::ggml {

// One element per block: the unquantized types.
struct BlockF32 {
  static constexpr uint32_t kType = GLMRT_GGML_F32;
  static constexpr int kValues = 1;
  uint8_t bits[4];
};
struct BlockF16 {
  static constexpr uint32_t kType = GLMRT_GGML_F16;
  static constexpr int kValues = 1;
  uint8_t bits[2];
};
struct BlockBF16 {
  static constexpr uint32_t kType = GLMRT_GGML_BF16;
  static constexpr int kValues = 1;
  uint8_t bits[2];
};

// 32-value blocks: value j and j + 16 share byte j of qs (low, high nibble).
struct BlockQ4_0 {
  static constexpr uint32_t kType = GLMRT_GGML_Q4_0;
  static constexpr int kValues = 32;
  uint8_t d[2];  // f16 scale
  uint8_t qs[16];
};
struct BlockQ4_1 {
  static constexpr uint32_t kType = GLMRT_GGML_Q4_1;
  static constexpr int kValues = 32;
  uint8_t d[2];  // f16 scale
  uint8_t m[2];  // f16 offset
  uint8_t qs[16];
};
struct BlockQ5_0 {
  static constexpr uint32_t kType = GLMRT_GGML_Q5_0;
  static constexpr int kValues = 32;
  uint8_t d[2];
  uint8_t qh[4];  // bit j: the fifth bit of value j
  uint8_t qs[16];
};
struct BlockQ5_1 {
  static constexpr uint32_t kType = GLMRT_GGML_Q5_1;
  static constexpr int kValues = 32;
  uint8_t d[2];
  uint8_t m[2];
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  static constexpr uint32_t kType = GLMRT_GGML_Q8_0;
  static constexpr int kValues = 32;
  uint8_t d[2];
  int8_t qs[32];
};
struct BlockIq4Nl {
  static constexpr uint32_t kType = GLMRT_GGML_IQ4_NL;
  static constexpr int kValues = 32;
  uint8_t d[2];
  uint8_t qs[16];  // indices into kValuesIq4nl
};
struct BlockMxfp4 {
  static constexpr uint32_t kType = GLMRT_GGML_MXFP4;
  static constexpr int kValues = 32;
  uint8_t e;       // E8M0 scale
  uint8_t qs[16];  // E2M1 codes, indices into kValuesMxfp4
};

// K-quants: 256-value super-blocks of 16 or 8 sub-blocks.
struct BlockQ2_K {
  static constexpr uint32_t kType = GLMRT_GGML_Q2_K;
  static constexpr int kValues = 256;
  uint8_t scales[16];  // low nibble scale, high nibble min, per 16 values
  uint8_t qs[64];
  uint8_t d[2];
  uint8_t dmin[2];
};
struct BlockQ3_K {
  static constexpr uint32_t kType = GLMRT_GGML_Q3_K;
  static constexpr int kValues = 256;
  uint8_t hmask[32];
  uint8_t qs[64];
  uint8_t scales[12];  // sixteen 6-bit scales
  uint8_t d[2];
};
struct BlockQ4_K {
  static constexpr uint32_t kType = GLMRT_GGML_Q4_K;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t dmin[2];
  uint8_t scales[12];  // eight 6-bit scales and eight 6-bit mins
  uint8_t qs[128];
};
struct BlockQ5_K {
  static constexpr uint32_t kType = GLMRT_GGML_Q5_K;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t dmin[2];
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
struct BlockQ6_K {
  static constexpr uint32_t kType = GLMRT_GGML_Q6_K;
  static constexpr int kValues = 256;
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint8_t d[2];
};
struct BlockIq4Xs {
  static constexpr uint32_t kType = GLMRT_GGML_IQ4_XS;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t scales_h[2];  // le16: 2 high bits of each of the 8 scales
  uint8_t scales_l[4];  // 4 low bits of each scale
  uint8_t qs[128];
};

// i-quants: 256-value super-blocks whose groups of 8 (or 4) values are
// indices into the lattices of ggml_grids.h.
struct BlockIq2Xxs {
  static constexpr uint32_t kType = GLMRT_GGML_IQ2_XXS;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t qs[64];  // per 32 values: 4 grid indices, then le32 of 4 x 7 sign bits and a scale
};
struct BlockIq2Xs {
  static constexpr uint32_t kType = GLMRT_GGML_IQ2_XS;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t qs[64];  // 32 x le16: 9-bit grid index, 7 sign bits
  uint8_t scales[8];
};
struct BlockIq2S {
  static constexpr uint32_t kType = GLMRT_GGML_IQ2_S;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t qs[64];  // 32 grid index low bytes, then 32 sign bytes
  uint8_t qh[8];
  uint8_t scales[8];
};
struct BlockIq3Xxs {
  static constexpr uint32_t kType = GLMRT_GGML_IQ3_XXS;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t qs[96];  // 64 grid indices, then 8 x le32 of sign bits and a scale
};
struct BlockIq3S {
  static constexpr uint32_t kType = GLMRT_GGML_IQ3_S;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t qs[64];
  uint8_t qh[8];
  uint8_t signs[32];
  uint8_t scales[4];
};
struct BlockIq1S {
  static constexpr uint32_t kType = GLMRT_GGML_IQ1_S;
  static constexpr int kValues = 256;
  uint8_t d[2];
  uint8_t qs[32];
  uint8_t qh[16];  // 8 x le16: 3 high index bits x 4, scale, delta sign
};
struct BlockIq1M {
  static constexpr uint32_t kType = GLMRT_GGML_IQ1_M;
  static constexpr int kValues = 256;
  uint8_t qs[32];
  uint8_t qh[16];
  uint8_t scales[8];  // 4 x le16: 3-bit sub-block scales; their top nibbles form the f16 scale
};

/// A block struct is ggml's block byte for byte: its size and value count are
/// those of ggml_types.h for its type, and it can sit at any address.
template <class Block>
constexpr bool matches_ggml_layout() {
  const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(Block::kType);
  return sizeof(Block) == static_cast<size_t>(traits.block_bytes) &&
         Block::kValues == traits.block_values && alignof(Block) == 1;
}
static_assert(matches_ggml_layout<BlockF32>() && matches_ggml_layout<BlockF16>() &&
              matches_ggml_layout<BlockBF16>());
static_assert(matches_ggml_layout<BlockQ4_0>() && matches_ggml_layout<BlockQ4_1>() &&
              matches_ggml_layout<BlockQ5_0>() && matches_ggml_layout<BlockQ5_1>() &&
              matches_ggml_layout<BlockQ8_0>() && matches_ggml_layout<BlockIq4Nl>() &&
              matches_ggml_layout<BlockMxfp4>());
static_assert(matches_ggml_layout<BlockQ2_K>() && matches_ggml_layout<BlockQ3_K>() &&
              matches_ggml_layout<BlockQ4_K>() && matches_ggml_layout<BlockQ5_K>() &&
              matches_ggml_layout<BlockQ6_K>() && matches_ggml_layout<BlockIq4Xs>());
static_assert(matches_ggml_layout<BlockIq2Xxs>() && matches_ggml_layout<BlockIq2Xs>() &&
              matches_ggml_layout<BlockIq2S>() && matches_ggml_layout<BlockIq3Xxs>() &&
              matches_ggml_layout<BlockIq3S>() && matches_ggml_layout<BlockIq1S>() &&
              matches_ggml_layout<BlockIq1M>());

/// Dequantizes `blocks` into `out`, which holds blocks.size() * kValues floats
/// (the caller's contract: dequantize_row checks it).
void dequantize_blocks(std::span<const BlockF32> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockF16> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockBF16> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ4_0> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ4_1> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ5_0> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ5_1> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ8_0> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq4Nl> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockMxfp4> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ2_K> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ3_K> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ4_K> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ5_K> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockQ6_K> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq4Xs> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq2Xxs> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq2Xs> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq2S> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq3Xxs> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq3S> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq1S> blocks, std::span<float> out);
void dequantize_blocks(std::span<const BlockIq1M> blocks, std::span<float> out);

/// True for the ggml types dequantize_row decodes (the 23 types GLM-5,
/// DeepSeek and Kimi GGUFs use); false for the others (Q8_1, Q8_K, TQ*,
/// integers, F64, ids removed from ggml or unknown).
bool dequantizes(uint32_t ggml_type);

/// Decodes `values` values of ggml type `ggml_type`, stored as whole blocks at
/// `blocks` (values / block_values of them, ggml_type_traits), into `out`
/// (`values` floats). False, writing nothing, when the type is not one
/// dequantizes() accepts or `values` is negative or not a whole number of
/// blocks.
bool dequantize_row(uint32_t ggml_type, const void* blocks, int64_t values, float* out);

/// Index of the first of `values` values of ggml type `ggml_type` at `blocks`
/// (whole blocks) that dequantizes to NaN or infinity, -1 when all are
/// finite, -2 for a type dequantizes() refuses. Reads the blocks' scales, not
/// their values (a block's values are finite when its f16 scales are): a
/// fraction of dequantize_row's time.
int64_t first_non_finite(uint32_t ggml_type, const void* blocks, int64_t values);

}  // namespace glmrt::plugin_support::ggml
