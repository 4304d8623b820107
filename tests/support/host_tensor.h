// A named tensor held in memory by the test support code: shape plus values
// as f32 (already rounded to the dtype it is stored with on disk, so the
// reference forward pass sees exactly what the runtime reads).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::test {

/// u8: raw bytes (values 0..255), e.g. the packed weights of a pre-quantized
/// expert whose scales sit beside it in `<name>.qs`. f8_e4m3: raw FP8 codes
/// (values 0..255) of a block-scaled checkpoint such as GLM-5-FP8.
enum class StoredDType { f32, bf16, f16, u8, f8_e4m3 };

struct HostTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
  StoredDType dtype = StoredDType::f32;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

/// An ordered list of tensors (the order files are written in).
using TensorList = std::vector<HostTensor>;

/// The tensor called `name`, or nullptr.
const HostTensor* find_tensor(const TensorList& tensors, std::string_view name);
HostTensor* find_tensor(TensorList& tensors, std::string_view name);
/// Removes `name`; returns whether it was there.
bool erase_tensor(TensorList& tensors, std::string_view name);

}  // namespace glmrt::test
