// kv_b_proj [heads * (qk_nope + v_head), kv_lora] split per head into the two
// matrices attention multiplies with: key_absorb, the key block transposed
// (rows h*kv_lora + l, columns qk_nope), and value (rows h*v_head + r).
#pragma once

#include <glmrt/weights/matrix.h>
#include <glmrt/weights/tensor_loader.h>

#include <string>

namespace glmrt {

struct KvBDims {
  int64_t heads = 0, nope = 0, v_head = 0, kv_lora = 0;
};

struct KvBSplit {
  Matrix key_absorb;  // [heads * kv_lora, nope]
  Matrix value;       // [heads * v_head, kv_lora]
};

/// Queues kv_b_proj `name` on `loader`; the matrices are filled by
/// loader.finish(). The value rows are kv_b's own rows: a container's
/// pre-quantized rows at the profile's precision are kept as they are. The key
/// block is transposed, so its per-row scales cannot follow it: it is
/// dequantized (exactly, in f32) and stored at the profile's precision.
KvBSplit load_kv_b(TensorLoader& loader, const std::string& name, const KvBDims& dims,
                   WeightPrecision precision);

}  // namespace glmrt
