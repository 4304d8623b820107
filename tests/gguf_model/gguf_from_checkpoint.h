// Writes a Hugging Face DeepSeek-family checkpoint (config.json +
// safetensors) as llama.cpp's convert_hf_to_gguf.py would: its metadata keys
// and tensor names, kv_b_proj split into attn_k_b / attn_v_b, routed experts
// stacked into 3-D tensors, every tensor kept in its own float type. For
// tests: no llama.cpp-made GGUF of these architectures ships with the tests.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <glmrt/model_files/gguf_writer.h>

namespace glmrt::test {

/// Changes for hostile variants: each key and tensor passes through these
/// before it is written; a key hook returning false drops the key.
struct GgufEdits {
  std::function<bool(const std::string& key, gguf::Value& value)> key;
  std::function<void(std::string& name, uint32_t& type, std::vector<int64_t>& dims)> tensor;
  std::function<void(gguf::Writer&)> extra;  // adds keys or tensors at the end
};

/// `architecture`: "deepseek32" or "deepseek2". With shards > 1, writes
/// STEM-0000k-of-0000N.gguf beside `gguf_file` (whose stem is STEM) instead.
void write_gguf_from_checkpoint(const std::filesystem::path& checkpoint,
                                const std::filesystem::path& gguf_file,
                                const std::string& architecture, const GgufEdits& edits = {},
                                int shards = 1);

}  // namespace glmrt::test
