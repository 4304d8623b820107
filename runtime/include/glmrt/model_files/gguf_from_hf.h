// How llama.cpp's convert_hf_to_gguf.py writes a DeepSeek-family Hugging Face
// model (glm-dsa, deepseek2, deepseek32): its metadata keys from config.json
// and the GGUF name of each tensor. Shared by `glmrt make-model --format gguf`
// and the tests that turn a checkpoint into a GGUF, so both write what
// llama.cpp writes and the reader (gguf_config.cpp, gguf_tensor_names.cpp)
// reads.
#pragma once

#include <glmrt/model_files/gguf_metadata.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace glmrt::gguf {

/// The metadata llama.cpp writes for `config` (a config.json of a
/// DeepSeek-family model) as `architecture`, in its order, with general.name
/// = `name`. block_count counts the MTP layers, as llama.cpp does.
std::vector<std::pair<std::string, Value>> metadata_of_hf_config(
    const nlohmann::ordered_json& config, std::string_view architecture, std::string_view name);

/// The GGUF name of the Hugging Face tensor `hf_name` when it is one tensor
/// in both (the reverse of the reader's table); nullopt for kv_b_proj (split
/// into attn_k_b / attn_v_b), routed experts (stacked: experts_tensor_name)
/// and names llama.cpp does not write.
std::optional<std::string> gguf_name_of_hf_tensor(std::string_view hf_name);

/// "blk.L.ffn_{kind}_exps.weight", kind gate, up or down: the 3-D tensor
/// [in, out, n_expert] holding every routed expert's `kind`_proj of layer L.
std::string experts_tensor_name(int layer, std::string_view kind);
/// "blk.L.attn_k_b.weight" and "blk.L.attn_v_b.weight": kv_b_proj split,
/// ggml dims [nope, kv_lora, H] and [kv_lora, v, H].
std::string key_b_tensor_name(int layer);
std::string value_b_tensor_name(int layer);

}  // namespace glmrt::gguf
