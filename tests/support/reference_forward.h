// A straightforward glm_moe_dsa forward pass in double precision, written
// from the model's definition (DESIGN.md "Model semantics") with naive loops
// and the textbook, non-absorbed MLA: K and V are expanded through kv_b for
// every position. It shares no code with the runtime's model; tests compare
// the two.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <vector>

#include "host_tensor.h"
#include "reference_config.h"

namespace glmrt::test {

struct ReferenceResult {
  std::vector<std::vector<double>> logits;  // [position][vocab]
  /// With MTP: row t (t = 0..T-2) predicts token t+2 from token t+1 and the
  /// main model's state at t.
  std::vector<std::vector<double>> mtp_logits;

  // The discrete decisions taken, for comparison and to choose clear prompts.
  /// layer -> for every row t >= index_topk: the sorted key positions kept
  /// (shared layers repeat the selection they reuse).
  std::map<int, std::vector<std::vector<int>>> indexer_selection;
  /// MoE layer (the MTP layer is num_hidden_layers) -> per position: the sorted routed expert ids.
  std::map<int, std::vector<std::vector<int>>> experts;

  /// Smallest gap between the last kept and the first dropped candidate of a
  /// router choice (sigmoid + correction bias), over top-k and group choices.
  double min_router_gap = std::numeric_limits<double>::infinity();
  /// Smallest indexer gap at the index_topk boundary, relative to the row's
  /// largest |score|.
  double min_indexer_rel_gap = std::numeric_limits<double>::infinity();

  int argmax(size_t position) const;
  /// top1 - top2 logit at `position`.
  double margin(size_t position) const;
};

/// Runs `tokens` through the main model, and its MTP layer when `with_mtp`,
/// with the weights in `weights` (looked up by their Hugging Face names;
/// shapes checked).
ReferenceResult reference_forward(const ReferenceConfig& config, const TensorList& weights,
                                  std::span<const int32_t> tokens, bool with_mtp = false);

}  // namespace glmrt::test
