// NaN / infinity detection on raw float weights, as read from disk: the
// tensor loader and the expert store check what they read before converting
// it, so a corrupt checkpoint fails naming the tensor instead of turning NaN
// into 0 (quantized profiles) or into NaN logits (f32).
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt {

/// Index of the first NaN or infinite element of `bytes`, raw little-endian
/// values of a float dtype (F32, BF16, F16, F64), or -1 when all are finite.
/// Tests the stored exponent bits (all ones) a block at a time, so the
/// all-finite case vectorises and runs at memory bandwidth.
int64_t find_non_finite(DType dtype, std::span<const std::byte> bytes);

/// How many elements of raw `bytes` are NaN or infinite, and the first one.
struct NonFiniteCount {
  int64_t count = 0;
  int64_t first = -1;  // -1 when count is 0
};

/// find_non_finite, then a count of the rest: the all-finite case costs the
/// same, the rest is paid only when something was found.
NonFiniteCount count_non_finite(DType dtype, std::span<const std::byte> bytes);

/// decode_to_f32 that checks as it goes: each chunk of `src` is scanned just
/// before it is decoded, while it is in cache, so the check costs no extra
/// pass over memory. Returns the index of the first NaN or infinite element
/// (`dst` then holds the elements before its chunk only), or -1.
int64_t decode_finite_to_f32(DType dtype, std::span<const std::byte> src, std::span<float> dst);

/// "NaN", "+Inf" or "-Inf" for the element at `index` of raw `bytes`.
const char* non_finite_kind(DType dtype, std::span<const std::byte> bytes, int64_t index);

/// Throws naming tensor `t`, its file in `dir` and the element ([row, col]
/// of a matrix) when `bytes`, whole elements of `t` starting at element
/// `first_element`, hold a NaN or an infinity; does nothing for a dtype that
/// is not float. The check loading makes, shared by `glmrt verify`.
void require_finite(const TensorDirectory& dir, const TensorInfo& t,
                    std::span<const std::byte> bytes, uint64_t first_element);

}  // namespace glmrt
