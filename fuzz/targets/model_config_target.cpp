// config.json as the runtime reads it: load_model_config, then the layer kinds
// every layer of the model (and its MTP layers) asks for.
#include <glmrt/base/error.h>
#include <glmrt/model_files/model_config.h>

#include <algorithm>

#include "fuzz_targets.h"

namespace glmrt::fuzz {
namespace {

void check_layer_kinds(const ModelConfig& config) {
  const auto layers = static_cast<size_t>(config.num_hidden_layers);
  expect(config.mlp_layer_types.size() == layers, "one MLP kind per layer");
  expect(config.indexer_types.size() == layers, "one indexer kind per layer");
  expect(config.indexer_kind(0) == IndexerKind::full, "layer 0's indexer is full");
  // The MTP layers follow the main ones; a few are enough to cover the rule.
  const int mtp = std::min(config.num_nextn_predict_layers, 4);
  for (int layer = 0; layer < config.num_hidden_layers + mtp; ++layer) {
    const MlpKind mlp = config.mlp_kind(layer);
    const IndexerKind indexer = config.indexer_kind(layer);
    if (layer >= config.num_hidden_layers) {
      expect(mlp == MlpKind::sparse && indexer == IndexerKind::full,
             "MTP layers are sparse with a full indexer");
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
    expect(config.model_type == "glm_moe_dsa", "only glm_moe_dsa is accepted");
    expect(config.num_experts_per_tok <= config.n_routed_experts, "top-k within the experts");
    check_layer_kinds(config);
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

}  // namespace glmrt::fuzz
