// The fuzz targets. Each takes one input, feeds it to a parser the way the
// runtime reads that file, exercises what the parser returned and checks its
// documented promises. glmrt::Error (a clean refusal) is caught inside; any
// other exception, InvariantBroken included, escapes and counts as a finding.
// A target returns 0, or -1 for an input it declines (libFuzzer then keeps it
// out of the corpus): see the exclusions in the targets' comments.
#pragma once

#include <array>
#include <string_view>

#include "fuzz_support.h"

namespace glmrt::fuzz {

/// One .safetensors file: TensorDirectory::open_file, then every small tensor read.
int fuzz_safetensors(Input input, const ScratchDir& scratch);
/// A model directory: model.safetensors.index.json followed by named files
/// (format in targets/safetensors_targets.cpp), opened with TensorDirectory::open.
int fuzz_model_dir(Input input, const ScratchDir& scratch);
/// config.json through load_model_config and the per-layer kinds.
int fuzz_model_config(Input input, const ScratchDir& scratch);
/// A profile YAML through load_profile.
int fuzz_profile(Input input, const ScratchDir& scratch);
/// tokenizer.json, then a NUL byte and text to encode and decode.
int fuzz_tokenizer(Input input, const ScratchDir& scratch);
/// A chat request body rendered as `glmrt template --request` does.
int fuzz_chat_request(Input input, const ScratchDir& scratch);
/// A Jinja chat template, optionally NUL + a chat request body, rendered by
/// the engine with transformers' variables under small render bounds.
int fuzz_chat_template(Input input, const ScratchDir& scratch);
/// ref.json through load_oracle.
int fuzz_oracle(Input input, const ScratchDir& scratch);
/// A request body as /v1/chat/completions and /v1/completions parse it, and
/// each line as a `glmrt score` request.
int fuzz_serve_request(Input input, const ScratchDir& scratch);
/// The bytes a client sends `glmrt serve`, framed as its connection reader
/// does: heads, bodies by Content-Length or chunked, pipelined requests.
int fuzz_request_framing(Input input, const ScratchDir& scratch);
/// A chunked request body (the first byte sets the limit), decoded at once
/// and in pieces.
int fuzz_chunked_body(Input input, const ScratchDir& scratch);

/// A model's answer (first byte: the family, second: where the stream
/// splits) read for tool calls as serve reads it.
int fuzz_tool_calls(Input input, const ScratchDir& scratch);

/// A GGUF file (or, after "%%%% NAME" lines, the shards of a split one in a
/// folder) through gguf::Model::open, every key's typed accessors and every
/// small tensor read.
int fuzz_gguf(Input input, const ScratchDir& scratch);

struct Target {
  std::string_view name;  // also the folder of its corpus: fuzz/corpus/<name>
  int (*run)(Input, const ScratchDir&);
};

inline constexpr std::array kTargets = {
    Target{"safetensors", fuzz_safetensors},     Target{"model_dir", fuzz_model_dir},
    Target{"model_config", fuzz_model_config},   Target{"profile", fuzz_profile},
    Target{"tokenizer", fuzz_tokenizer},         Target{"chat_request", fuzz_chat_request},
    Target{"chat_template", fuzz_chat_template}, Target{"oracle", fuzz_oracle},
    Target{"serve_request", fuzz_serve_request}, Target{"request_framing", fuzz_request_framing},
    Target{"chunked_body", fuzz_chunked_body},   Target{"tool_calls", fuzz_tool_calls},
    Target{"gguf", fuzz_gguf},
};

}  // namespace glmrt::fuzz
