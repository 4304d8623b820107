#include "kv_b_split.h"

#include <cstring>
#include <vector>

namespace glmrt {
namespace {

// Value rows of one head: kv_b rows [h*(nope+vd) + nope, (h+1)*(nope+vd)).
void split_value(const SourceMatrix& src, const MatrixStorage& value, const KvBDims& d) {
  const bool same_bytes = src.dtype == DType::U8     ? src.packed_type == value.type
                          : src.dtype == DType::F32  ? value.type == GLMRT_F32
                          : src.dtype == DType::BF16 ? value.type == GLMRT_BF16
                                                     : false;
  const int64_t rows = d.heads * d.v_head;
#pragma omp parallel
  {
    std::vector<float> row(static_cast<size_t>(d.kv_lora));
#pragma omp for schedule(static)
    for (int64_t out = 0; out < rows; ++out) {
      const int64_t h = out / d.v_head, r = out % d.v_head;
      const int64_t in = h * (d.nope + d.v_head) + d.nope + r;
      if (same_bytes) {
        std::memcpy(value.data + out * value.row_bytes, src.data.data() + in * src.row_bytes(),
                    static_cast<size_t>(value.row_bytes));
        if (value.scales) value.scales[out] = src.scales[in];
      } else {
        src.decode_row(in, row);
        encode_row(row, value, out);
      }
    }
  }
}

// Key block of head h, W_k [nope, kv_lora] = kv_b rows [h*(nope+vd), h*(nope+vd) + nope),
// becomes key_absorb rows h*kv_lora + l holding column l of W_k.
void split_key(const SourceMatrix& src, const MatrixStorage& key, const KvBDims& d) {
  const int64_t L = d.kv_lora, nope = d.nope;
#pragma omp parallel
  {
    std::vector<float> block(static_cast<size_t>(nope * L));
    std::vector<float> column(static_cast<size_t>(nope));
#pragma omp for schedule(static)
    for (int64_t h = 0; h < d.heads; ++h) {
      for (int64_t r = 0; r < nope; ++r)
        src.decode_row(h * (nope + d.v_head) + r, std::span(block).subspan(r * L, L));
      for (int64_t l = 0; l < L; ++l) {
        for (int64_t r = 0; r < nope; ++r) column[r] = block[r * L + l];
        encode_row(column, key, h * L + l);
      }
    }
  }
}

}  // namespace

KvBSplit load_kv_b(TensorLoader& loader, const std::string& name, const KvBDims& d,
                   WeightBits bits) {
  const uint32_t type = element_type_for(bits);
  KvBSplit split{
      Matrix::allocate(type, d.heads * d.kv_lora, d.nope, loader.budget(), "dense weights"),
      Matrix::allocate(type, d.heads * d.v_head, d.kv_lora, loader.budget(), "dense weights")};
  loader.read_matrix(name, d.heads * (d.nope + d.v_head), d.kv_lora,
                     [key = split.key_absorb.storage(), value = split.value.storage(), d](
                         const SourceMatrix& src, const StoredMatrix&) {
                       split_key(src, key, d);
                       split_value(src, value, d);
                     });
  return split;
}

}  // namespace glmrt
