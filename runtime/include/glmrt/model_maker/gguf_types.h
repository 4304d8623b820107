// `make-model --gguf-types SPEC`: the ggml type of each role of a synthetic
// GGUF. SPEC is one type for every role ("Q4_0") or role=TYPE pairs
// ("experts=Q4_K,dense=Q8_0"); type names are ggml's, in any case.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt {

/// The roles a matrix of a DeepSeek-family model plays, as SPEC names them.
enum class GgufRole {
  experts,  // routed experts (ffn_{gate,up,down}_exps)
  dense,    // attention, shared expert, dense FFN, MTP projection
  kv_b,     // attn_k_b / attn_v_b (kv_b_proj split; rows of qk_nope / kv_lora values)
  embed,    // token_embd
  output,   // output (lm_head)
};

/// Types per role. Norms, biases, the router, exp_probs_b and the DSA
/// indexer's small tensors are always F32, as llama.cpp writes them.
struct GgufTypes {
  uint32_t experts, dense, kv_b, embed, output;  // glmrt_ggml_type
  uint32_t of(GgufRole role) const;
};

/// The ggml types make-model writes: F32, BF16 and every type kernels-avx2
/// runs (plugin::kGgmlWeightTypes).
std::vector<uint32_t> writable_ggml_types();

/// Parses SPEC. A role left out takes the default: experts Q4_K, dense Q8_0,
/// kv_b / embed / output dense's type. Throws glmrt::Error naming an
/// unknown type (listing the writable ones), role or a malformed pair.
GgufTypes parse_gguf_types(std::string_view spec);

}  // namespace glmrt
