#include <glmrt/base/error.h>
#include <glmrt/weights/tensor_loader.h>

#include <fmt/ranges.h>

namespace glmrt {

const TensorInfo& TensorLoader::checked(const std::string& name, std::vector<int64_t> shape) const {
  const TensorInfo& t = tensors_.at(name);
  if (usage_) usage_->mark(t);
  if (t.shape != shape)
    fail("tensor {} in {} has shape [{}], the config implies [{}]", name,
         tensors_.files().at(t.file_index), fmt::join(t.shape, ", "), fmt::join(shape, ", "));
  return t;
}

int TensorLoader::packed_type_for(uint64_t bytes, int64_t rows, int64_t cols) {
  for (uint32_t type : {GLMRT_I8, GLMRT_I4, GLMRT_I2})
    if (static_cast<int64_t>(bytes) == rows * plugin::packed_row_bytes(type, cols))
      return static_cast<int>(type);
  return -1;
}

Matrix TensorLoader::matrix(const std::string& name, int64_t rows, int64_t cols, WeightBits bits,
                            const std::string& category) const {
  const TensorInfo* scales = tensors_.find(name + ".qs");
  if (scales) {
    const TensorInfo& packed = tensors_.at(name);
    if (usage_) usage_->mark(packed);
    const int type = packed_type_for(packed.byte_size, rows, cols);
    if (packed.dtype != DType::U8 || type < 0)
      fail(
          "tensor {} in {}: pre-quantized data must be U8 holding a {}x{} int8/int4/int2 matrix, "
          "found {} with {} bytes",
          name, tensors_.files().at(packed.file_index), rows, cols, dtype_name(packed.dtype),
          packed.byte_size);
    checked(name + ".qs", {rows});
    std::vector<std::byte> bytes(packed.byte_size);
    tensors_.read_raw(packed, bytes);
    std::vector<float> s = tensors_.read_f32(*scales);
    return Matrix::from_packed(static_cast<uint32_t>(type), bytes, s, rows, cols, budget_,
                               category);
  }
  std::vector<float> values = f32(name, rows, cols);
  try {
    return Matrix::from_f32(values, rows, cols, bits, budget_, category);
  } catch (const Error& e) {
    fail("tensor {} in {}: {}", name, tensors_.files().at(tensors_.at(name).file_index), e.what());
  }
}

std::vector<float> TensorLoader::vector(const std::string& name, int64_t n) const {
  return tensors_.read_f32(checked(name, {n}));
}

std::vector<float> TensorLoader::f32(const std::string& name, int64_t rows, int64_t cols) const {
  return tensors_.read_f32(checked(name, {rows, cols}));
}

}  // namespace glmrt
