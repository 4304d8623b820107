// `glmrt make-model --format gguf`: the model plan_model describes, written
// as llama.cpp writes such a model (gguf_from_hf.h): one GGUF file, the
// matrices in the ggml types --gguf-types gives each role, norms, biases and
// the router F32.
#pragma once

#include <glmrt/model_maker/make_model.h>

#include <nlohmann/json.hpp>

namespace glmrt {

/// Writes `o.out` (a file that must not exist) for `config`; bytes written,
/// files 1. Refuses, before writing, a row that is not whole blocks of its
/// role's type, naming the tensor.
MakeModelResult make_gguf_model(const MakeModelOptions& o, const nlohmann::ordered_json& config);

}  // namespace glmrt
