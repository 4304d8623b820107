// How a weight matrix W[O, I] (O output rows, I inputs) is laid out in memory.
// Part of the v1 contract: a new quantization format is a new element type or
// packing value, never a major ABI bump.
#pragma once

#include <glmrt/plugin/abi.h>
#include <glmrt/plugin/ggml_types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum glmrt_element_type {
  GLMRT_F32 = 0,   // 4 bytes per value
  GLMRT_BF16 = 1,  // 2 bytes per value (upper half of an IEEE float)
  GLMRT_I8 = 2,    // signed int8, 1 byte per value
  GLMRT_I4 = 3,  // 2 values per byte: element 2k in the low nibble, 2k+1 in the high; stored as v+8
  GLMRT_I2 = 4,  // 4 values per byte: element 4k+j in bits 2j..2j+1; stored as v+2
  // 3 bits per value, stored as v+4 (0..7), in blocks of 128 values (the
  // last block of a row holds the n = cols % 128 left over): first the low
  // two bits of the block's n values packed as GLMRT_I2 packs them (ceil(n/4)
  // bytes: element 4k+j in bits 2j..2j+1 of byte k), then their high bits,
  // element e of the block in bit e % 8 of byte e / 8 (ceil(n/8) bytes). A
  // full block is 48 bytes: 32 of low bits, 16 of high bits. A new element
  // type needs no ABI change: a plugin that does not know it says so in
  // supports(), and the host refuses the plugin for that format.
  GLMRT_I3 = 5,
  // Two-level scales (as llama.cpp's K-quants): the codes of a row laid out
  // as GLMRT_I4 / GLMRT_I3 / GLMRT_I2 lay them out, then one signed int8
  // sub-scale per group of G inputs (G = 32, 32, 16: two_level_group()),
  // ceil(cols / G) bytes. The view's scales are F32 [O, ceil(I / 256)], one
  // per block of 256 inputs, and group_size is 256:
  //   value[o][i] = q * scales[o][i / 256] * sub[o][i / G].
  // A small group's scale costs 8 bits instead of 32.
  GLMRT_I4K = 6,
  GLMRT_I3K = 7,
  GLMRT_I2K = 8,
  // ABI 1.5: ggml's weight types, as GGUF files store them. Element type
  // GLMRT_GGML_BLOCKS_BASE + t is ggml type t (ggml_types.h); a row is ggml's
  // blocks of that type back to back (cols a multiple of the block's values),
  // each block carrying its own scales: the view's `scales` is NULL and
  // group_size 0. The values are those of ggml's reference dequantization.
  // Defined for the types of kGgmlWeightTypes below (F16, the Q*, K- and
  // i-quants, MXFP4); F32 and BF16 rows are GLMRT_F32 and GLMRT_BF16. A
  // plugin of an older minor is never given these (the host does not ask).
  GLMRT_GGML_BLOCKS_BASE = 0x100,
} glmrt_element_type;

/// Symmetric quantization: value = q * scale. f32 and bf16 carry no scales.
typedef struct glmrt_weight_format {
  uint32_t struct_size;
  uint32_t element_type;  // glmrt_element_type
  /// Inputs sharing one scale within a row; 0 = one scale per row.
  uint32_t group_size;
  /// Packing variant of element_type; 0 = the layout documented above.
  uint32_t packing;
  /// Alignment in bytes the data pointer and row stride honour (at least 1).
  uint32_t alignment;
} glmrt_weight_format;

/// A view of W[O, I]. Row o starts at data + o * row_stride_bytes. Scales are
/// F32, [O] for per-row or [O, ceil(I / group_size)] for per-group formats.
typedef struct glmrt_weight_view {
  glmrt_weight_format format;
  const void* data;
  const float* scales;
  int64_t rows;  // O
  int64_t cols;  // I
  int64_t row_stride_bytes;
} glmrt_weight_view;

#ifdef __cplusplus
}  // extern "C"

namespace glmrt::plugin {

/// Values in one block of a GLMRT_I3 row, and the bytes a full block takes.
inline constexpr int64_t kInt3BlockValues = 128;
inline constexpr int64_t kInt3BlockBytes = 48;

/// Bytes of a GLMRT_I3 block holding n (1..128) values: low bits, then high bits.
constexpr int64_t int3_block_bytes(int64_t n) {
  return (n + 3) / 4 + (n + 7) / 8;
}

/// Where the high bits of a GLMRT_I3 block of n values start, from the block's first byte.
constexpr int64_t int3_high_offset(int64_t n) {
  return (n + 3) / 4;
}

/// Code (v + 4, 0..7) of element i of a GLMRT_I3 row of `cols` values.
constexpr unsigned int3_stored_code(const uint8_t* row, int64_t cols, int64_t i) {
  const int64_t block = i / kInt3BlockValues, e = i % kInt3BlockValues;
  const int64_t first = block * kInt3BlockValues;
  const int64_t n = cols - first < kInt3BlockValues ? cols - first : kInt3BlockValues;
  const uint8_t* base = row + block * kInt3BlockBytes;
  const unsigned low = (base[e / 4] >> (2 * (e % 4))) & 0x3u;
  const unsigned high = (base[int3_high_offset(n) + e / 8] >> (e % 8)) & 0x1u;
  return low | (high << 2);
}

/// Writes stored code u (v + 4, 0..7) as element i of a GLMRT_I3 row of `cols`
/// values, leaving the other bits as they are.
constexpr void int3_store_code(uint8_t* row, int64_t cols, int64_t i, unsigned u) {
  const int64_t block = i / kInt3BlockValues, e = i % kInt3BlockValues;
  const int64_t first = block * kInt3BlockValues;
  const int64_t n = cols - first < kInt3BlockValues ? cols - first : kInt3BlockValues;
  uint8_t* base = row + block * kInt3BlockBytes;
  uint8_t& low = base[e / 4];
  const int low_shift = static_cast<int>(2 * (e % 4));
  low = static_cast<uint8_t>((low & ~(0x3u << low_shift)) | ((u & 0x3u) << low_shift));
  uint8_t& high = base[int3_high_offset(n) + e / 8];
  const int high_shift = static_cast<int>(e % 8);
  high = static_cast<uint8_t>((high & ~(0x1u << high_shift)) | (((u >> 2) & 0x1u) << high_shift));
}

/// The ggml types that are element types of ABI 1.5 (GLMRT_GGML_BLOCKS_BASE +
/// each), in the order listings show them.
inline constexpr uint32_t kGgmlWeightTypes[] = {
    GLMRT_GGML_F16,   GLMRT_GGML_Q8_0,    GLMRT_GGML_Q4_0,  GLMRT_GGML_Q4_1,    GLMRT_GGML_Q5_0,
    GLMRT_GGML_Q5_1,  GLMRT_GGML_Q2_K,    GLMRT_GGML_Q3_K,  GLMRT_GGML_Q4_K,    GLMRT_GGML_Q5_K,
    GLMRT_GGML_Q6_K,  GLMRT_GGML_IQ1_S,   GLMRT_GGML_IQ1_M, GLMRT_GGML_IQ2_XXS, GLMRT_GGML_IQ2_XS,
    GLMRT_GGML_IQ2_S, GLMRT_GGML_IQ3_XXS, GLMRT_GGML_IQ3_S, GLMRT_GGML_IQ4_NL,  GLMRT_GGML_IQ4_XS,
    GLMRT_GGML_MXFP4,
};

/// The element type holding rows of ggml type `ggml_type`.
constexpr uint32_t ggml_element_type(uint32_t ggml_type) {
  return GLMRT_GGML_BLOCKS_BASE + ggml_type;
}

/// True for an element type of ggml blocks this SDK defines.
constexpr bool is_ggml_blocks(uint32_t type) {
  for (const uint32_t t : kGgmlWeightTypes)
    if (type == ggml_element_type(t)) return true;
  return false;
}

/// The ggml type of a ggml-blocks element type (meaningful when is_ggml_blocks).
constexpr uint32_t ggml_type_of(uint32_t type) {
  return type - GLMRT_GGML_BLOCKS_BASE;
}

/// Values per block of a ggml-blocks element type (a row's cols are a
/// multiple of it), 1 for every other type.
constexpr int64_t ggml_block_values(uint32_t type) {
  return is_ggml_blocks(type) ? ggml_type_traits(ggml_type_of(type)).block_values : 1;
}

/// Inputs sharing one f32 scale in a two-level format (its group_size).
inline constexpr int64_t kTwoLevelBlock = 256;

/// The element type whose code layout a two-level type uses (itself otherwise).
constexpr uint32_t code_type(uint32_t type) {
  switch (type) {
    case GLMRT_I4K:
      return GLMRT_I4;
    case GLMRT_I3K:
      return GLMRT_I3;
    case GLMRT_I2K:
      return GLMRT_I2;
    default:
      return type;
  }
}

constexpr bool is_two_level(uint32_t type) {
  return type == GLMRT_I4K || type == GLMRT_I3K || type == GLMRT_I2K;
}

/// Inputs sharing one int8 sub-scale in a two-level type, 0 for other types.
constexpr int64_t two_level_group(uint32_t type) {
  return type == GLMRT_I4K || type == GLMRT_I3K ? 32 : type == GLMRT_I2K ? 16 : 0;
}

/// Bytes one row of `cols` values takes in the packed layout of `type`.
constexpr int64_t packed_row_bytes(uint32_t type, int64_t cols) {
  switch (type) {
    case GLMRT_I4K:
    case GLMRT_I3K:
    case GLMRT_I2K: {
      const int64_t group = two_level_group(type);
      return packed_row_bytes(code_type(type), cols) + (cols + group - 1) / group;
    }
    case GLMRT_F32:
      return cols * 4;
    case GLMRT_BF16:
      return cols * 2;
    case GLMRT_I8:
      return cols;
    case GLMRT_I4:
      return (cols + 1) / 2;
    case GLMRT_I2:
      return (cols + 3) / 4;
    case GLMRT_I3: {
      const int64_t rest = cols % kInt3BlockValues;
      return cols / kInt3BlockValues * kInt3BlockBytes + (rest ? int3_block_bytes(rest) : 0);
    }
    default:
      // ggml blocks: -1 also when cols is not a whole number of blocks.
      return is_ggml_blocks(type) ? ggml_row_bytes(ggml_type_of(type), cols) : -1;
  }
}

/// "f32", "bf16", "int8", "int4", "int3", "int2", "int4-k32", "int3-k32",
/// "int2-k16", a ggml type's name in lower case for ggml blocks ("f16",
/// "q4_k", "iq2_xxs", "mxfp4"), or nullptr for a type this SDK does not define.
constexpr const char* element_type_name(uint32_t type) {
  switch (type) {
    case GLMRT_F32:
      return "f32";
    case GLMRT_BF16:
      return "bf16";
    case GLMRT_I8:
      return "int8";
    case GLMRT_I4:
      return "int4";
    case GLMRT_I2:
      return "int2";
    case GLMRT_I3:
      return "int3";
    case GLMRT_I4K:
      return "int4-k32";
    case GLMRT_I3K:
      return "int3-k32";
    case GLMRT_I2K:
      return "int2-k16";
    default:
      break;
  }
  switch (is_ggml_blocks(type) ? ggml_type_of(type) : ~0u) {
    case GLMRT_GGML_F16:
      return "f16";
    case GLMRT_GGML_Q8_0:
      return "q8_0";
    case GLMRT_GGML_Q4_0:
      return "q4_0";
    case GLMRT_GGML_Q4_1:
      return "q4_1";
    case GLMRT_GGML_Q5_0:
      return "q5_0";
    case GLMRT_GGML_Q5_1:
      return "q5_1";
    case GLMRT_GGML_Q2_K:
      return "q2_k";
    case GLMRT_GGML_Q3_K:
      return "q3_k";
    case GLMRT_GGML_Q4_K:
      return "q4_k";
    case GLMRT_GGML_Q5_K:
      return "q5_k";
    case GLMRT_GGML_Q6_K:
      return "q6_k";
    case GLMRT_GGML_IQ1_S:
      return "iq1_s";
    case GLMRT_GGML_IQ1_M:
      return "iq1_m";
    case GLMRT_GGML_IQ2_XXS:
      return "iq2_xxs";
    case GLMRT_GGML_IQ2_XS:
      return "iq2_xs";
    case GLMRT_GGML_IQ2_S:
      return "iq2_s";
    case GLMRT_GGML_IQ3_XXS:
      return "iq3_xxs";
    case GLMRT_GGML_IQ3_S:
      return "iq3_s";
    case GLMRT_GGML_IQ4_NL:
      return "iq4_nl";
    case GLMRT_GGML_IQ4_XS:
      return "iq4_xs";
    case GLMRT_GGML_MXFP4:
      return "mxfp4";
    default:
      return nullptr;
  }
}

/// The f32 scale of each of the `groups` sub-groups of row `row_data` of a
/// two-level type (`block_scales` the row's scales): what the row's values
/// are multiplied by, group by group, as if it had per-group f32 scales.
inline void two_level_group_scales(uint32_t type, const void* row_data, int64_t cols,
                                   const float* block_scales, float* out) {
  const int64_t group = two_level_group(type);
  const auto* sub = static_cast<const int8_t*>(row_data) + packed_row_bytes(code_type(type), cols);
  const int64_t groups = (cols + group - 1) / group;
  const int64_t per_block = kTwoLevelBlock / group;
  // Block by block: no division per group (it ran once per row of every product).
  for (int64_t first = 0, block = 0; first < groups; first += per_block, ++block) {
    const int64_t end = first + per_block < groups ? first + per_block : groups;
    for (int64_t g = first; g < end; ++g) out[g] = block_scales[block] * static_cast<float>(sub[g]);
  }
}

/// True for every integer type of this SDK whose view carries f32 `scales`.
/// It grows as types are added, so a plugin's supports() names the types it
/// implements instead of accepting whatever this says (the conformance suite
/// fails one that does not). ggml blocks hold their scales inside the rows,
/// so they are not in it: is_ggml_blocks() names them.
constexpr bool is_quantized(uint32_t type) {
  return type == GLMRT_I8 || type == GLMRT_I4 || type == GLMRT_I3 || type == GLMRT_I2 ||
         is_two_level(type);
}

}  // namespace glmrt::plugin
#endif
