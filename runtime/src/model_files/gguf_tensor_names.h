// The Hugging Face name of each tensor llama.cpp's converter writes for the
// glm-dsa, deepseek2 and deepseek32 architectures (its tensor name table,
// gguf-py/gguf/constants.py, and convert_hf_to_gguf.py's mapping).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace glmrt::model_files {

enum class GgufTensorRole {
  plain,       // one tensor, its ggml dims reversed
  experts,     // [in, out, n_expert]: one view per expert, `hf_name` holding "{}" for it
  key_absorb,  // attn_k_b [nope, kv_lora, H]: rows h*kv_lora + l of kv_b's key block transposed
  value,       // attn_v_b [kv_lora, v, H]: kv_b's value rows, h*v + r
};

struct GgufTensorName {
  std::string hf_name;
  GgufTensorRole role = GgufTensorRole::plain;
};

/// The name `gguf_name` loads as; nullopt for a name these architectures do not have.
std::optional<GgufTensorName> hf_tensor_name(std::string_view gguf_name);

/// The GGUF name llama.cpp writes a plain Hugging Face tensor under (the
/// reverse of hf_tensor_name); nullopt for kv_b_proj, routed experts and
/// names not in the table.
std::optional<std::string> gguf_tensor_name(std::string_view hf_name);

/// The names the model loads attn_k_b and attn_v_b of layer L as: kv_b_proj
/// split per head as attention multiplies with it (see model/kv_b_split.h).
std::string key_absorb_name(int layer);
std::string value_name(int layer);

}  // namespace glmrt::model_files
