// What opening a model checks of its files, without reading a value: every
// tensor the config implies is present with the shape, dtype, format stamp
// and scales loading expects (load_model_weights through a TensorLoader in
// check mode, the routed experts through plan_expert_layouts). `glmrt verify`
// runs it on a container and `glmrt convert` on the container it plans, so
// neither accepts what `glmrt run` would refuse. Values are not read: their
// finiteness is checked where they are read (verify's pass over the files,
// convert's reads of its input).
#pragma once

#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <filesystem>

namespace glmrt {

/// Throws glmrt::Error, naming the tensor, its file and what the config
/// implies, for the first tensor loading would refuse; warns (as loading
/// does) about tensors nothing reads, naming `model_dir`.
void check_loadable(const ModelConfig& config, const TensorDirectory& tensors,
                    const std::filesystem::path& model_dir);

}  // namespace glmrt
