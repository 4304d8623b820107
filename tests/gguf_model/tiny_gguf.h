// A tiny-256 GGUF written by make-model for engine tests of the ggml
// kernels: widths of 256 hold whole q4_k super-blocks and whole groups of 8
// q4_0 blocks.
#pragma once

#include <glmrt/model_maker/make_model.h>

#include <filesystem>
#include <string>

namespace glmrt::test {

/// Writes `out` with `moe_layers` MoE layers and make-model's --gguf-types
/// `types`; returns `out`.
inline std::filesystem::path make_tiny_gguf(const std::filesystem::path& out, int moe_layers,
                                            const std::string& types) {
  MakeModelOptions o;
  o.preset = "tiny-256";
  o.moe_layers = moe_layers;
  o.out = out;
  o.gguf = true;
  o.gguf_types = types;
  make_model(o);
  return out;
}

}  // namespace glmrt::test
