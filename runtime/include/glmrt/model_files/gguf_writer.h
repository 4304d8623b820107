// Writes GGUF files (version 3, little-endian) as llama.cpp lays them out:
// the header, the tensor infos, then each tensor at the next multiple of the
// alignment. The file is written under a temporary name and renamed into
// place, so a failed write never leaves a partial file.
#pragma once

#include <glmrt/model_files/gguf_metadata.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::gguf {

/// The encoding of the format's parts, appended to `out` (the writer uses
/// them; tests build broken files from them).
void append_u32(std::string& out, uint32_t v);
void append_u64(std::string& out, uint64_t v);
void append_string(std::string& out, std::string_view text);
/// A value's payload (no type id); an array as element type, count, elements.
void append_value(std::string& out, const Value& value);
/// A key/value pair: key, type id, payload.
void append_pair(std::string& out, std::string_view key, const Value& value);
void append_tensor_info(std::string& out, std::string_view name, std::span<const int64_t> dims,
                        uint32_t type, uint64_t offset);

class Writer {
 public:
  /// A tensor as the writer lays it out.
  struct Tensor {
    std::string name;
    uint32_t type;              // glmrt_ggml_type
    std::vector<int64_t> dims;  // ggml order
    uint64_t byte_size;
    std::string data;  // its bytes, when given to add_tensor
  };
  /// Fills `out` with rows [first_row, first_row + out.size() / row bytes)
  /// of tensor `index` (a row: dims[0] values, whole blocks of its type).
  using TensorRows = std::function<void(size_t index, int64_t first_row, std::span<std::byte> out)>;

  /// Sets a metadata pair; a key set twice is refused.
  void set(std::string key, Value value);
  /// Declares a tensor; throws for an unknown type, a row length that is not
  /// whole blocks, 0 or more than 4 dimensions, or a name over 63 bytes.
  /// `data`, when not empty, must be its bytes.
  void add_tensor(std::string name, uint32_t type, std::vector<int64_t> dims,
                  std::string data = {});

  const std::vector<Tensor>& tensors() const { return tensors_; }
  /// general.alignment when set (a uint32), else 32.
  uint32_t alignment() const;
  /// Each tensor's offset in the data section: in order, each aligned.
  std::vector<uint64_t> offsets() const;
  /// Everything before the data section, padded to the alignment.
  std::string header() const;
  /// The whole file in memory (small files: tests).
  std::string bytes() const;
  /// Writes the file through a temporary name and a rename; tensors' bytes
  /// come from add_tensor's data, or from `fill` when given: it is asked for
  /// pieces of about 64 MB of whole rows, in file order, and fills the next
  /// piece while a thread writes the last (two pieces in memory).
  void write(const std::filesystem::path& file, const TensorRows& fill = {}) const;

 private:
  Metadata metadata_;
  std::vector<Tensor> tensors_;
};

}  // namespace glmrt::gguf
