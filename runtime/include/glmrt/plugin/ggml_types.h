// The tensor types of ggml (the library behind llama.cpp and its GGUF files):
// each type's id as GGUF stores it, its name, and the size of one block.
//
// These are format facts, not code: the ids are ggml's `enum ggml_type`
// (ggml/include/ggml.h, where removed types keep their numbers as gaps), and
// the block sizes are the `blck_size` / `type_size` of ggml's type traits
// (ggml/src/ggml.c), which follow from the block structs of
// ggml/src/ggml-common.h (QK4_0 = 32, QK_K = 256, ...). A tensor of a block
// type stores each row as whole blocks: its first dimension is a multiple of
// block_values, and a row takes row_values / block_values * block_bytes bytes.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum glmrt_ggml_type {
  GLMRT_GGML_F32 = 0,
  GLMRT_GGML_F16 = 1,
  GLMRT_GGML_Q4_0 = 2,
  GLMRT_GGML_Q4_1 = 3,
  // 4 and 5 were Q4_2 and Q4_3, removed from ggml.
  GLMRT_GGML_Q5_0 = 6,
  GLMRT_GGML_Q5_1 = 7,
  GLMRT_GGML_Q8_0 = 8,
  GLMRT_GGML_Q8_1 = 9,
  GLMRT_GGML_Q2_K = 10,
  GLMRT_GGML_Q3_K = 11,
  GLMRT_GGML_Q4_K = 12,
  GLMRT_GGML_Q5_K = 13,
  GLMRT_GGML_Q6_K = 14,
  GLMRT_GGML_Q8_K = 15,
  GLMRT_GGML_IQ2_XXS = 16,
  GLMRT_GGML_IQ2_XS = 17,
  GLMRT_GGML_IQ3_XXS = 18,
  GLMRT_GGML_IQ1_S = 19,
  GLMRT_GGML_IQ4_NL = 20,
  GLMRT_GGML_IQ3_S = 21,
  GLMRT_GGML_IQ2_S = 22,
  GLMRT_GGML_IQ4_XS = 23,
  GLMRT_GGML_I8 = 24,
  GLMRT_GGML_I16 = 25,
  GLMRT_GGML_I32 = 26,
  GLMRT_GGML_I64 = 27,
  GLMRT_GGML_F64 = 28,
  GLMRT_GGML_IQ1_M = 29,
  GLMRT_GGML_BF16 = 30,
  // 31-33 were Q4_0_4_4, Q4_0_4_8 and Q4_0_8_8, removed from ggml.
  GLMRT_GGML_TQ1_0 = 34,
  GLMRT_GGML_TQ2_0 = 35,
  // 36-38 were IQ4_NL_4_4, IQ4_NL_4_8 and IQ4_NL_8_8, removed from ggml.
  GLMRT_GGML_MXFP4 = 39,
  GLMRT_GGML_NVFP4 = 40,
  GLMRT_GGML_Q1_0 = 41,
  GLMRT_GGML_Q2_0 = 42,
} glmrt_ggml_type;

#ifdef __cplusplus
}  // extern "C"

namespace glmrt::plugin {

/// One ggml type: its GGUF name and how many values one block of `block_bytes` holds.
struct GgmlTypeTraits {
  const char* name;  // nullptr: not a type ggml defines (a removed id or out of range)
  int64_t block_values;
  int64_t block_bytes;
};

/// Traits of ggml type `type`; name == nullptr for an id ggml does not define.
constexpr GgmlTypeTraits ggml_type_traits(uint32_t type) {
  switch (type) {
    case GLMRT_GGML_F32:
      return {"F32", 1, 4};
    case GLMRT_GGML_F16:
      return {"F16", 1, 2};
    case GLMRT_GGML_Q4_0:
      return {"Q4_0", 32, 18};  // f16 d, 16 bytes of nibbles
    case GLMRT_GGML_Q4_1:
      return {"Q4_1", 32, 20};  // f16 d, f16 m, 16 bytes
    case GLMRT_GGML_Q5_0:
      return {"Q5_0", 32, 22};  // f16 d, 4 bytes high bits, 16 bytes
    case GLMRT_GGML_Q5_1:
      return {"Q5_1", 32, 24};  // f16 d, f16 m, 4 + 16 bytes
    case GLMRT_GGML_Q8_0:
      return {"Q8_0", 32, 34};  // f16 d, 32 int8
    case GLMRT_GGML_Q8_1:
      return {"Q8_1", 32, 36};  // f16 d, f16 s, 32 int8
    case GLMRT_GGML_Q2_K:
      return {"Q2_K", 256, 84};  // 16 scales, 64 qs, f16 d, f16 dmin
    case GLMRT_GGML_Q3_K:
      return {"Q3_K", 256, 110};  // 32 hmask, 64 qs, 12 scales, f16 d
    case GLMRT_GGML_Q4_K:
      return {"Q4_K", 256, 144};  // f16 d, f16 dmin, 12 scales, 128 qs
    case GLMRT_GGML_Q5_K:
      return {"Q5_K", 256, 176};  // + 32 bytes of high bits
    case GLMRT_GGML_Q6_K:
      return {"Q6_K", 256, 210};  // 128 ql, 64 qh, 16 scales, f16 d
    case GLMRT_GGML_Q8_K:
      return {"Q8_K", 256, 292};  // f32 d, 256 int8, 16 int16 sums
    case GLMRT_GGML_IQ2_XXS:
      return {"IQ2_XXS", 256, 66};
    case GLMRT_GGML_IQ2_XS:
      return {"IQ2_XS", 256, 74};
    case GLMRT_GGML_IQ3_XXS:
      return {"IQ3_XXS", 256, 98};
    case GLMRT_GGML_IQ1_S:
      return {"IQ1_S", 256, 50};
    case GLMRT_GGML_IQ4_NL:
      return {"IQ4_NL", 32, 18};
    case GLMRT_GGML_IQ3_S:
      return {"IQ3_S", 256, 110};
    case GLMRT_GGML_IQ2_S:
      return {"IQ2_S", 256, 82};
    case GLMRT_GGML_IQ4_XS:
      return {"IQ4_XS", 256, 136};
    case GLMRT_GGML_I8:
      return {"I8", 1, 1};
    case GLMRT_GGML_I16:
      return {"I16", 1, 2};
    case GLMRT_GGML_I32:
      return {"I32", 1, 4};
    case GLMRT_GGML_I64:
      return {"I64", 1, 8};
    case GLMRT_GGML_F64:
      return {"F64", 1, 8};
    case GLMRT_GGML_IQ1_M:
      return {"IQ1_M", 256, 56};
    case GLMRT_GGML_BF16:
      return {"BF16", 1, 2};
    case GLMRT_GGML_TQ1_0:
      return {"TQ1_0", 256, 54};
    case GLMRT_GGML_TQ2_0:
      return {"TQ2_0", 256, 66};
    case GLMRT_GGML_MXFP4:
      return {"MXFP4", 32, 17};  // e8m0 exponent, 16 bytes of e2m1 pairs
    case GLMRT_GGML_NVFP4:
      return {"NVFP4", 64, 36};  // 4 UE4M3 scales (one per 16 values), 32 bytes of e2m1 pairs
    case GLMRT_GGML_Q1_0:
      return {"Q1_0", 128, 18};  // f16 d, 16 bytes of sign bits
    case GLMRT_GGML_Q2_0:
      return {"Q2_0", 64, 18};  // f16 d, 16 bytes of 2-bit quants
    default:
      return {nullptr, 0, 0};
  }
}

/// Bytes one row of `values` values of `type` takes, or -1 when `type` is not
/// a ggml type, `values` is not a whole number of its blocks, or the byte
/// count would not fit int64_t (a row length read from a hostile file).
constexpr int64_t ggml_row_bytes(uint32_t type, int64_t values) {
  const GgmlTypeTraits traits = ggml_type_traits(type);
  if (traits.name == nullptr || values < 0 || values % traits.block_values != 0) return -1;
  const int64_t blocks = values / traits.block_values;
  if (blocks > INT64_MAX / traits.block_bytes) return -1;
  return blocks * traits.block_bytes;
}

}  // namespace glmrt::plugin
#endif
