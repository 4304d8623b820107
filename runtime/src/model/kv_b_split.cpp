#include "kv_b_split.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace glmrt {
namespace {

// `src` holds whole heads of kv_b, the first being `first_head`: per head,
// nope key rows then v_head value rows, each kv_lora wide.
void split_heads(const SourceMatrix& src, int64_t first_head, const MatrixStorage& key,
                 const MatrixStorage& value, const KvBDims& d) {
  const int64_t L = d.kv_lora, nope = d.nope, vd = d.v_head, per_head = nope + vd;
  const bool same_bytes = src.dtype == DType::U8
                              ? src.packed_type == value.type && src.group_size == value.group_size
                          : src.dtype == DType::F32  ? value.type == GLMRT_F32
                          : src.dtype == DType::BF16 ? value.type == GLMRT_BF16
                                                     : false;
  std::vector<float> block(static_cast<size_t>(nope * L));
  std::vector<float> column(static_cast<size_t>(std::max(nope, L)));
  for (int64_t k = 0; k < src.rows / per_head; ++k) {
    const int64_t h = first_head + k;
    // Key block W_k [nope, L]: key_absorb row h*L + l holds its column l.
    for (int64_t r = 0; r < nope; ++r)
      src.decode_row(k * per_head + r, std::span(block).subspan(r * L, L));
    for (int64_t l = 0; l < L; ++l) {
      for (int64_t r = 0; r < nope; ++r) column[r] = block[r * L + l];
      encode_row(std::span(column).first(nope), key, h * L + l);
    }
    // Value rows are kv_b's own rows: kept byte for byte when the precision matches.
    for (int64_t r = 0; r < vd; ++r) {
      const int64_t in = k * per_head + nope + r, out = h * vd + r;
      if (same_bytes) {
        std::memcpy(value.data + out * value.row_bytes, src.data.data() + in * src.row_bytes(),
                    static_cast<size_t>(value.row_bytes));
        const int64_t spr = value.scales_per_row();
        if (value.scales)
          std::memcpy(value.scales + out * spr, src.scales.data() + in * spr,
                      static_cast<size_t>(spr) * sizeof(float));
      } else {
        src.decode_row(in, std::span(column).first(L));
        encode_row(std::span(column).first(L), value, out);
      }
    }
  }
}

}  // namespace

KvBSplit load_kv_b(TensorLoader& loader, const std::string& name, const KvBDims& d,
                   WeightPrecision precision) {
  const uint32_t type = element_type_for(precision);
  KvBSplit split{Matrix::allocate(type, d.heads * d.kv_lora, d.nope, loader.budget(),
                                  "dense weights", precision.group),
                 Matrix::allocate(type, d.heads * d.v_head, d.kv_lora, loader.budget(),
                                  "dense weights", precision.group)};
  const int64_t per_head = d.nope + d.v_head;
  loader.read_matrix(name, d.heads * per_head, d.kv_lora, per_head,
                     [key = split.key_absorb.storage(), value = split.value.storage(), d, per_head](
                         const SourceMatrix& rows, int64_t first_row) {
                       split_heads(rows, first_row / per_head, key, value, d);
                     });
  return split;
}

}  // namespace glmrt
