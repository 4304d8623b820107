// Small but whole glm_moe_dsa checkpoints for convert's tests: a dense and a
// sparse layer (two routed experts and a shared one), BF16 like a Hugging Face
// release, with the tensors a test is about put in place of the generated
// ones. Whole, because convert refuses a checkpoint whose container would not
// load.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "host_tensor.h"

namespace glmrt::test {

/// The config: hidden_size `hidden`, q_lora_rank `q_lora` (the shape of
/// model.layers.L.self_attn.q_a_proj.weight is [q_lora, hidden]).
nlohmann::json small_config(int64_t hidden = 64, int64_t q_lora = 32);

/// The generated tensors of `config`, BF16 (the router's correction bias F32).
TensorList small_checkpoint_tensors(const nlohmann::json& config);

/// `tensors` with `replacement` in place of the tensor of its name (appended
/// when there is none).
void replace_tensor(TensorList& tensors, HostTensor replacement);

/// Writes config.json and `tensors` as one model.safetensors into `dir`.
void write_small_checkpoint(const std::filesystem::path& dir, const nlohmann::json& config,
                            const TensorList& tensors);

}  // namespace glmrt::test
