// A model's identity for what glmrt remembers about it (expert usage): a hash
// of config.json and of every safetensors header (names, shapes, dtypes,
// offsets, metadata), so a changed checkpoint never reuses a stale history.
// The weights themselves are not read: hashing hundreds of GB would take
// minutes, and a re-quantized or re-converted checkpoint changes its headers.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace glmrt {

/// 32 lowercase hex digits (128 bits).
std::string model_id(const std::filesystem::path& model_dir, const TensorDirectory& tensors);

/// The hash model_id() uses, over any bytes (exposed for tests).
class ContentHash {
 public:
  void update(std::string_view bytes);
  std::string hex() const;

 private:
  uint64_t a_ = 0xcbf29ce484222325ull;  // FNV-1a 64
  uint64_t b_ = 0x9e3779b97f4a7c15ull;  // a multiply-xorshift mix, independent of a_
  uint64_t length_ = 0;
};

}  // namespace glmrt
