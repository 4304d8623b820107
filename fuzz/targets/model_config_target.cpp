// config.json as the runtime reads it: load_model_config, then the layer kinds
// every layer of the model (and its MTP layers) asks for.
#include <glmrt/base/error.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/model_kind.h>

#include <cmath>

#include <algorithm>

#include "fuzz_targets.h"

namespace glmrt::fuzz {
namespace {

void check_layer_kinds(const ModelConfig& config) {
  const auto layers = static_cast<size_t>(config.num_hidden_layers);
  expect(config.mlp_layer_types.size() == layers, "one MLP kind per layer");
  expect(config.indexer_types.size() == layers, "one indexer kind per layer");
  // Layer 0's indexer is its own, or there is none (DeepSeek-V3 / Kimi-K2).
  const IndexerKind own =
      config.kind->indexer == IndexerLayout::none ? IndexerKind::none : IndexerKind::full;
  expect(config.indexer_kind(0) == own, "layer 0's indexer is its own kind's");
  // The MTP layers follow the main ones; a few are enough to cover the rule.
  const int mtp = std::min(config.num_nextn_predict_layers, 4);
  for (int layer = 0; layer < config.num_hidden_layers + mtp; ++layer) {
    const MlpKind mlp = config.mlp_kind(layer);
    const IndexerKind indexer = config.indexer_kind(layer);
    if (layer >= config.num_hidden_layers) {
      expect(mlp == MlpKind::sparse && indexer == own,
             "MTP layers are sparse with the kind's own indexer");
    }
  }
  try {
    config.mlp_kind(-1);
    expect(false, "mlp_kind(-1) is refused");
  } catch (const Error&) {  // expected
  }
}

}  // namespace

int fuzz_model_config(Input input, const ScratchDir& scratch) {
  const auto folder = scratch.folder("config");
  ScratchDir::write(folder, "config.json", as_text(input));
  try {
    const ModelConfig config = load_model_config(folder);
    expect(config.kind != nullptr && find_model_kind(config.model_type) == config.kind,
           "only the model kinds are accepted");
    expect(config.kind->q_lora_optional || config.has_q_lora(), "the q LoRA where required");
    expect(std::isfinite(config.rope.attention_factor) && config.rope.attention_factor > 0 &&
               std::isfinite(config.rope.softmax_multiplier) && config.rope.softmax_multiplier > 0,
           "RoPE scale factors are positive");
    expect(config.num_experts_per_tok <= config.n_routed_experts, "top-k within the experts");
    check_layer_kinds(config);
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

}  // namespace glmrt::fuzz
