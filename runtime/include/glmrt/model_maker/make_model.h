// glmrt make-model: a random checkpoint with a real model's dimensions in the
// seed program's container layout (see model_plan.h), for benchmarks and
// tests at scale; or the same model as one GGUF file. Everything is written into DIR.partial and
// renamed to DIR at the end, so an interrupted run never leaves a model that looks whole.
#pragma once

#include <glmrt/base/weight_precision.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace glmrt {

struct MakeModelOptions {
  std::string preset;  // glm5-slice or tiny (model_preset_names())
  int moe_layers = 0;  // after one dense layer
  std::filesystem::path out;
  double hot_skew = 0;  // >= 0; biases each router towards a few experts
  bool mtp = true;      // write the multi-token-prediction layer
  // lm_head = the embedding moved down one row: greedy decoding counts up
  // (t -> t + 1), so a prompt that already holds the run the model will
  // produce is one prompt-lookup drafting predicts: a stand-in for text a
  // model continues predictably (code, quotations, lists), which random
  // weights never give.
  bool successor_head = false;
  uint64_t seed = 1;
  WeightPrecision experts = WeightBits::int4;  // the routed experts' format
  // One GGUF file (llama.cpp's layout, types per role: gguf_types.h)
  // instead of a container folder; `experts` then does not apply.
  bool gguf = false;
  std::string gguf_types = "experts=Q4_K,dense=Q8_0";
};

struct MakeModelResult {
  uint64_t bytes = 0;
  int files = 0;
  double seconds = 0;
};

/// Writes the model. Refuses, before writing anything, an `out` that exists
/// and is not an empty directory (a GGUF: that exists at all), a leftover
/// `out`.partial, and a disk without room for the model.
MakeModelResult make_model(const MakeModelOptions& options);

}  // namespace glmrt
