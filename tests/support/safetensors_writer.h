// Writes safetensors checkpoints: one model.safetensors, or shards plus
// model.safetensors.index.json, as Hugging Face lays them out. Every file is
// written under a temporary name and renamed into place.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "host_tensor.h"

namespace glmrt::test {

std::string_view stored_dtype_name(StoredDType dtype);
size_t stored_dtype_size(StoredDType dtype);

/// Encodes one value (round to nearest even) and decodes it back: the value a
/// reader gets from a file holding `value` as `dtype`.
float round_to_stored(StoredDType dtype, float value);
/// Rounds every value of `tensor` to its dtype in place.
void round_tensor_to_stored(HostTensor& tensor);

/// Raw little-endian bytes of `tensor` in its dtype.
std::string encode_tensor(const HostTensor& tensor);

/// How a file lays its tensors out, for the forms containers take beyond
/// Hugging Face's back-to-back layout.
struct FileLayout {
  /// The header is padded with spaces so the data section starts at a
  /// multiple of this (8 in Hugging Face's files, 4096 in aligned containers).
  uint64_t data_alignment = 8;
  /// Offset of each tensor in the data section, in the order of `tensors`
  /// (gaps between them are zero bytes). Empty: back to back.
  std::vector<uint64_t> offsets;
  /// Entries of __metadata__ besides "format": "pt".
  std::map<std::string, std::string> metadata;
};

/// Bytes of `tensor` as stored.
uint64_t stored_bytes(const HostTensor& tensor);

/// One safetensors file holding `tensors` in order.
void write_safetensors_file(const std::filesystem::path& file, const TensorList& tensors,
                            const FileLayout& layout = {});

/// `shards` files model-0000i-of-0000n.safetensors in `dir` (tensors split in
/// order into runs of about equal bytes) plus model.safetensors.index.json.
/// shards == 1 writes a single model.safetensors and no index.
void write_safetensors_checkpoint(const std::filesystem::path& dir, const TensorList& tensors,
                                  int shards);

/// Writes `text` to `file` through a temporary name and a rename.
void write_file_atomically(const std::filesystem::path& file, std::string_view text);

}  // namespace glmrt::test
