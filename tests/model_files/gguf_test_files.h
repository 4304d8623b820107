// GGUF files for the reader's tests: written by the real writer, or
// assembled part by part (gguf::append_*) so a test can break any field.
#pragma once

#include <glmrt/model_files/gguf_writer.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::test {

/// A GGUF file from raw parts: "GGUF", version, counts, the pairs and the
/// tensor infos as given (already encoded), padding to `alignment`, then
/// `data`. Nothing is checked, so any field may be wrong.
struct GgufParts {
  uint32_t version = 3;
  uint64_t tensor_count = 0;
  uint64_t pair_count = 0;
  std::string pairs;         // gguf::append_pair ...
  std::string tensor_infos;  // gguf::append_tensor_info ...
  uint32_t alignment = 32;
  std::string data;

  std::string bytes() const {
    std::string out = "GGUF";
    gguf::append_u32(out, version);
    gguf::append_u64(out, tensor_count);
    gguf::append_u64(out, pair_count);
    out += pairs;
    out += tensor_infos;
    out.append((alignment - out.size() % alignment) % alignment, '\0');
    out += data;
    return out;
  }
  void pair(std::string_view key, const gguf::Value& value) {
    gguf::append_pair(pairs, key, value);
    ++pair_count;
  }
  void tensor(std::string_view name, std::vector<int64_t> dims, uint32_t type, uint64_t offset) {
    gguf::append_tensor_info(tensor_infos, name, dims, type, offset);
    ++tensor_count;
  }
};

}  // namespace glmrt::test
