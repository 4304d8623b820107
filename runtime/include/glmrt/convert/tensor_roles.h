// Which precision `glmrt convert` gives each tensor of a checkpoint: the
// routed experts, the dense matrices, embed_tokens, lm_head and kv_b_proj each
// have their own (overrides by name pattern on top); norms, biases, the router
// and the indexer's weights_proj, which the runtime reads in f32, are copied
// as stored; FP8 block scales are consumed by their matrix.
#pragma once

#include <glmrt/convert/convert_options.h>
#include <glmrt/model_files/safetensors.h>

#include <string>
#include <string_view>

namespace glmrt {

enum class TensorRole { experts, dense, embed, lm_head, kv_b, kept, block_scales, dropped };

std::string_view role_name(TensorRole role);

/// The role of tensor `name` of a checkpoint with `main_layers` decoder
/// layers (the MTP layer is number main_layers; dropped with --drop-mtp).
TensorRole tensor_role(const TensorInfo& t, int main_layers, bool drop_mtp);

/// The precision a matrix of `role` gets: the class's, then the last
/// override whose pattern matches `name`.
WeightPrecision role_precision(const ConvertOptions& o, TensorRole role, const std::string& name);

/// The FP8 block-scale tensor of weight `name` ("x.weight" -> "x.weight_scale_inv").
std::string block_scale_name(const std::string& name);

}  // namespace glmrt
