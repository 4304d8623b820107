// The public face of dtype conversion; the conversions live in dtype.cpp.
#include <glmrt/base/error.h>
#include <glmrt/model_files/safetensors.h>

#include "dtype_conversion.h"

namespace glmrt {

bool is_float_dtype(DType d) {
  return model_files::converts_to_f32(d);
}

void decode_to_f32(DType d, std::span<const std::byte> src, std::span<float> dst) {
  if (!is_float_dtype(d)) fail("cannot decode dtype {} as floating point", dtype_name(d));
  if (src.size() != dst.size() * dtype_size(d))
    fail("decode_to_f32: {} bytes for {} values of {}", src.size(), dst.size(), dtype_name(d));
  model_files::convert_to_f32(d, src, dst);
}

}  // namespace glmrt
