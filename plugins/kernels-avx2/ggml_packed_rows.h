// Resident weights packed into lanes (ABI 1.7, Kernels::pack_rows): the
// layout the lane kernels (ggml_lanes.h) read, made once at load and in
// place, so a one-token product gets what a prefill's gets: 8 weight rows
// per vector, their codes meeting broadcast inputs in one vpdpbusd, the
// float steps 8 rows at a time, no horizontal adds.
//
// Unlike a prefill's scratch packing it keeps every byte count: a group of
// 8 rows takes the bytes the 8 rows took, codes and scales as stored
// (nibble pairs, f16 scales, q4_k's packed 6-bit scales); the kernel does
// the few conversions as it loads. Within a group the data go in the order
// the kernel reads them, so the group is read front to back. Same bits as
// the row kernels (the argument of ggml_lanes.h).
//
// q8_0 is not packed: its row kernel already streams at the memory's speed
// at S = 1, and packed it measured no faster (docs/kernels-benchmark.md).
#pragma once

#include "ggml_matmul.h"

#include <cstdint>

namespace glmrt::kernels_avx2 {

/// glmrt_weight_format::packing of rows packed here ("LAN8").
inline constexpr uint32_t kLanePacking = 0x384E414C;
/// Rows packed together.
inline constexpr int64_t kPackedGroupRows = 8;

/// True when rows of ggml type `ggml_type` (q4_0, q4_k, q6_k) with `blocks` blocks
/// pack here.
bool packs_rows(uint32_t ggml_type, int64_t blocks);

/// Packs each whole group of 8 rows of `row_bytes` bytes, `row_stride`
/// apart, in place: a group's packed bytes from its first row on. Over at
/// most `n_threads` threads; rows after the last whole group stay as they are.
void pack_rows_in_place(uint32_t ggml_type, uint8_t* data, int64_t rows, int64_t blocks,
                        int64_t row_bytes, int64_t row_stride, int n_threads);

/// out[c * 8 + i] = row i of a packed group . activation row x[c], for
/// c < columns (1 to kGgmlColumns).
void meet_packed_group(uint32_t ggml_type, const uint8_t* group, int64_t blocks,
                       const GgmlColumn* x, int columns, float* out);

/// True when meet_packed_groups_wide takes rows of this type (q4_k, q6_k).
bool meets_packed_groups_wide(uint32_t ggml_type);

/// With AVX-512 F/BW/VL/VNNI only (ggml_lanes_wide.cpp): two packed groups,
/// the second `second` bytes after `group`, in one zmm: out[c * 16 + i] =
/// row i of them . x[c], the same bits as meet_packed_group's.
void meet_packed_groups_wide(uint32_t ggml_type, const uint8_t* group, int64_t second,
                             int64_t blocks, const GgmlColumn* x, int columns, float* out);

}  // namespace glmrt::kernels_avx2
