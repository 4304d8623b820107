// dequantize_row: a ggml type id and raw bytes to floats, for callers that
// hold a tensor's type as GGUF stores it (the GGUF reader, weight formats,
// conformance tests) rather than a block struct.
#include "ggml/ggml_blocks.h"

namespace glmrt::plugin_support::ggml {

namespace {

template <class Block>
void decode(const void* blocks, int64_t n_blocks, float* out) {
  const auto count = static_cast<size_t>(n_blocks);
  dequantize_blocks(std::span<const Block>(static_cast<const Block*>(blocks), count),
                    std::span<float>(out, count * Block::kValues));
}

using Decoder = void (*)(const void* blocks, int64_t n_blocks, float* out);

/// The decoder of `ggml_type`, or nullptr for a type this library does not read.
Decoder decoder_of(uint32_t ggml_type) {
  switch (ggml_type) {
    case GLMRT_GGML_F32:
      return decode<BlockF32>;
    case GLMRT_GGML_F16:
      return decode<BlockF16>;
    case GLMRT_GGML_BF16:
      return decode<BlockBF16>;
    case GLMRT_GGML_Q4_0:
      return decode<BlockQ4_0>;
    case GLMRT_GGML_Q4_1:
      return decode<BlockQ4_1>;
    case GLMRT_GGML_Q5_0:
      return decode<BlockQ5_0>;
    case GLMRT_GGML_Q5_1:
      return decode<BlockQ5_1>;
    case GLMRT_GGML_Q8_0:
      return decode<BlockQ8_0>;
    case GLMRT_GGML_IQ4_NL:
      return decode<BlockIq4Nl>;
    case GLMRT_GGML_MXFP4:
      return decode<BlockMxfp4>;
    case GLMRT_GGML_Q2_K:
      return decode<BlockQ2_K>;
    case GLMRT_GGML_Q3_K:
      return decode<BlockQ3_K>;
    case GLMRT_GGML_Q4_K:
      return decode<BlockQ4_K>;
    case GLMRT_GGML_Q5_K:
      return decode<BlockQ5_K>;
    case GLMRT_GGML_Q6_K:
      return decode<BlockQ6_K>;
    case GLMRT_GGML_IQ4_XS:
      return decode<BlockIq4Xs>;
    case GLMRT_GGML_IQ2_XXS:
      return decode<BlockIq2Xxs>;
    case GLMRT_GGML_IQ2_XS:
      return decode<BlockIq2Xs>;
    case GLMRT_GGML_IQ2_S:
      return decode<BlockIq2S>;
    case GLMRT_GGML_IQ3_XXS:
      return decode<BlockIq3Xxs>;
    case GLMRT_GGML_IQ3_S:
      return decode<BlockIq3S>;
    case GLMRT_GGML_IQ1_S:
      return decode<BlockIq1S>;
    case GLMRT_GGML_IQ1_M:
      return decode<BlockIq1M>;
    default:
      return nullptr;
  }
}

}  // namespace

bool dequantizes(uint32_t ggml_type) {
  return decoder_of(ggml_type) != nullptr;
}

bool dequantize_row(uint32_t ggml_type, const void* blocks, int64_t values, float* out) {
  const Decoder decoder = decoder_of(ggml_type);
  if (decoder == nullptr || values < 0) return false;
  const int64_t block_values = plugin::ggml_type_traits(ggml_type).block_values;
  if (values % block_values != 0) return false;
  if (values > 0) decoder(blocks, values / block_values, out);
  return true;
}

}  // namespace glmrt::plugin_support::ggml
